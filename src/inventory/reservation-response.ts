import type { Reservation } from './reservation-repository.js';
import type { ReservationResponse } from './reservation-schemas.js';

export function toReservationResponse(reservation: Reservation): ReservationResponse {
  return {
    id: reservation.id,
    status: reservation.status,
    lines: reservation.lines.map((line) => ({
      variant_id: line.variant_id,
      quantity: line.quantity,
      allocations: reservation.allocations
        .filter((allocation) => allocation.position === line.position)
        .map((allocation) => ({ location_id: allocation.location_id, quantity: allocation.quantity }))
        .sort((a, b) => (a.location_id < b.location_id ? -1 : 1)),
    })),
    reference: reservation.reference,
    expires_at: reservation.expires_at.toISOString(),
    created_at: reservation.created_at.toISOString(),
    updated_at: reservation.updated_at.toISOString(),
  };
}
