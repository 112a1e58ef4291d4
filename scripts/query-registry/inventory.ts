import * as locationRepository from '../../src/inventory/location-repository.js';
import * as reconciliationRepository from '../../src/inventory/reconciliation-repository.js';
import * as reservationRepository from '../../src/inventory/reservation-repository.js';
import * as stockLevelRepository from '../../src/inventory/stock-level-repository.js';
import * as stockMovementRepository from '../../src/inventory/stock-movement-repository.js';
import * as stockRepository from '../../src/inventory/stock-repository.js';
import { call, callerReadSample, FIRST_PAGE, notSql, recordNothing, SAMPLE, type RepositoryFile } from './sample.js';

const movement = { variant_id: SAMPLE.variantId, location_id: SAMPLE.locationId, delta: 5, stock_after: 15, reason: 'adjustment', reference: null, actor_id: SAMPLE.userId };

export const inventory: RepositoryFile[] = [
  {
    file: 'src/inventory/location-repository.ts',
    area: 'inventory',
    entries: {
      locationsByPriority: callerReadSample(locationRepository.locationsByPriority),
      locationById: callerReadSample(locationRepository.locationById, SAMPLE.locationId),
      lockLocation: call(locationRepository.lockLocation, SAMPLE.locationId),
      takeDefaultLocationTurn: call(locationRepository.takeDefaultLocationTurn),
      insertLocation: call(locationRepository.insertLocation, { id: SAMPLE.newId, code: 'hamburg', name: 'Hamburg', priority: 100, status: 'active', created_at: SAMPLE.date, updated_at: SAMPLE.date }),
      updateLocation: call(locationRepository.updateLocation, SAMPLE.locationId, { name: 'Berlin, hall 2', is_default: false }),
      clearDefaultLocation: call(locationRepository.clearDefaultLocation, SAMPLE.locationId),
      deleteLocation: call(locationRepository.deleteLocation, SAMPLE.locationId),
    },
  },
  {
    file: 'src/inventory/reservation-repository.ts',
    area: 'inventory',
    entries: {
      withLinesOfPage: call(reservationRepository.withLinesOfPage, [
        { id: SAMPLE.reservationId, status: 'active', reference: null, expires_at: SAMPLE.date, created_by: null, created_at: SAMPLE.date, updated_at: SAMPLE.date },
      ]),
      activeReservationsOfVariantPage: call(reservationRepository.activeReservationsOfVariantPage, SAMPLE.variantId, FIRST_PAGE),
      reservationsPage: call(reservationRepository.reservationsPage, { reference: 'order-1', status: 'active' }, FIRST_PAGE),
      reservationsCreatedByPage: call(reservationRepository.reservationsCreatedByPage, SAMPLE.userId, FIRST_PAGE),
      countReservations: call(reservationRepository.countReservations, { status: 'active' }),
      countActiveReservationsOfVariant: call(reservationRepository.countActiveReservationsOfVariant, SAMPLE.variantId),
      reservationById: callerReadSample(reservationRepository.reservationById, SAMPLE.reservationId),
      lockReservation: call(reservationRepository.lockReservation, SAMPLE.reservationId),
      readReservation: call(reservationRepository.readReservation, SAMPLE.reservationId),
      // Without a hold in the statement: the units are checked, not held (the hold's step: holdingStep).
      insertReservationIfAvailable: call(
        reservationRepository.insertReservationIfAvailable,
        { lines: [{ variant_id: SAMPLE.variantId, quantity: 1 }], reference: 'order-1', expiresIn: 900, createdBy: SAMPLE.userId },
        recordNothing,
      ),
      reservedMismatches: call(reservationRepository.reservedMismatches, 100),
      unitsHeldByOpenLines: call(reservationRepository.unitsHeldByOpenLines, SAMPLE.variantId),
      closingSteps: notSql('fragment'),
      stillOpen: notSql('fragment'),
      insertAllocations: call(reservationRepository.insertAllocations, [{ reservation_id: SAMPLE.reservationId, position: 0, location_id: SAMPLE.locationId, quantity: 2 }]),
      replaceAllocations: call(reservationRepository.replaceAllocations, SAMPLE.reservationId, [0], [{ reservation_id: SAMPLE.reservationId, position: 0, location_id: SAMPLE.locationId, quantity: 2 }]),
      closeReservations: call(reservationRepository.closeReservations, [SAMPLE.reservationId], 'released'),
      claimLapsedReservations: call(reservationRepository.claimLapsedReservations, 100),
      overdueReservationStats: call(reservationRepository.overdueReservationStats),
    },
  },
  {
    file: 'src/inventory/stock-level-repository.ts',
    area: 'inventory',
    entries: {
      defaultLocationId: call(stockLevelRepository.defaultLocationId),
      shareLocations: call(stockLevelRepository.shareLocations, [SAMPLE.locationId]),
      locationsByIds: call(stockLevelRepository.locationsByIds, [SAMPLE.locationId]),
      levelsOfVariants: call(stockLevelRepository.levelsOfVariants, [SAMPLE.variantId]),
      writeLevelStock: call(stockLevelRepository.writeLevelStock, SAMPLE.variantId, SAMPLE.locationId, 15),
      moveReserved: call(stockLevelRepository.moveReserved, [{ variant_id: SAMPLE.variantId, location_id: SAMPLE.locationId, delta: 2 }]),
      insertLevels: call(stockLevelRepository.insertLevels, [{ variant_id: SAMPLE.variantId, location_id: SAMPLE.locationId, stock: 5 }]),
      levelsAtEveryLocation: call(stockLevelRepository.levelsAtEveryLocation, SAMPLE.variantId),
      locationHoldsStock: call(stockLevelRepository.locationHoldsStock, SAMPLE.locationId),
    },
  },
  {
    file: 'src/inventory/stock-movement-repository.ts',
    area: 'inventory',
    entries: {
      insertStockMovement: call(stockMovementRepository.insertStockMovement, movement),
      insertStockMovements: call(stockMovementRepository.insertStockMovements, [movement]),
      stockMovementsPage: call(stockMovementRepository.stockMovementsPage, SAMPLE.variantId, FIRST_PAGE),
      countStockMovements: call(stockMovementRepository.countStockMovements, SAMPLE.variantId),
    },
  },
  {
    file: 'src/inventory/stock-repository.ts',
    area: 'inventory',
    entries: {
      lockVariant: call(stockRepository.lockVariant, SAMPLE.variantId),
      insertVariantsWithStock: call(stockRepository.insertVariantsWithStock, [{ id: SAMPLE.newId, product_id: 'P-1', sku: 'SKU-NEW', name: 'Shirt', price: 1000, attributes: { color: 'blue' }, stock: 5 }]),
      lockVariantsInIdOrder: call(stockRepository.lockVariantsInIdOrder, [SAMPLE.variantId]),
      variantKey: callerReadSample(stockRepository.variantKey, SAMPLE.variantId),
      writeStock: call(stockRepository.writeStock, SAMPLE.variantId, { stock: 15, moveVersion: true }),
      holdUnits: call(stockRepository.holdUnits, SAMPLE.variantId, 1, { split: true }),
      holdingStep: notSql('fragment'),
      releaseUnits: call(stockRepository.releaseUnits, SAMPLE.variantId, SAMPLE.locationId, 1),
      // The units of the sample reservation's line, committed with nothing alongside.
      takeHeldUnits: call(stockRepository.takeHeldUnits, SAMPLE.variantId, SAMPLE.locationId, 2, { reason: 'reservation_committed', reference: 'order-1', actor_id: SAMPLE.userId }, recordNothing),
      variantsByIds: call(stockRepository.variantsByIds, [SAMPLE.variantId]),
      takeReconciliationTurn: call(stockRepository.takeReconciliationTurn),
      writeReserved: call(stockRepository.writeReserved, SAMPLE.variantId, 2),
      moveVersions: call(stockRepository.moveVersions, [SAMPLE.variantId]),
      recountAvailableAtInactiveLocations: call(stockRepository.recountAvailableAtInactiveLocations, SAMPLE.locationId),
    },
  },
  {
    file: 'src/inventory/reconciliation-repository.ts',
    area: 'inventory',
    entries: {
      levelMismatches: call(reconciliationRepository.levelMismatches, 100),
    },
  },
];
