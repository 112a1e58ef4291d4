/**
 * What `npm run seed` (scripts/seed.ts) puts into a running service: a small shop's worth of
 * variants, customers and reservations for the staff console to show. Every SKU starts with
 * `DEMO-` and every email ends in `@demo.example` (a reserved domain: no mail reaches anyone),
 * so the demo rows are easy to find, and a rerun recognises what it made before.
 */

export interface ProductPlan {
  productId: string;
  /** The middle of each SKU: `DEMO-<code>-<attribute values>`. */
  code: string;
  name: string;
  /** Minor units (cents). */
  price: number;
  variants: Array<{ attributes: Record<string, string>; stock: number }>;
}

/** A customer and the balance changes of its ledger, in order; each reason is unique within the customer. */
export interface CustomerPlan {
  name: string;
  email: string;
  phone?: string;
  ledger: Array<{ delta: number; reason: string }>;
}

/** Lines name variants by SKU; `outcome` is the state the reservation is left in. */
export interface ReservationPlan {
  reference: string;
  outcome: 'active' | 'committed' | 'released';
  lines: Array<{ sku: string; quantity: number }>;
}

export const products: ProductPlan[] = [
  {
    productId: 'demo-tee',
    code: 'TEE',
    name: 'Organic cotton tee',
    price: 2500,
    variants: [
      { attributes: { colour: 'navy', size: 'S' }, stock: 12 },
      { attributes: { colour: 'navy', size: 'M' }, stock: 20 },
      { attributes: { colour: 'navy', size: 'L' }, stock: 15 },
      // Sold out, so the console's "available only" filter has something to hide.
      { attributes: { colour: 'white', size: 'M' }, stock: 0 },
    ],
  },
  {
    productId: 'demo-hoodie',
    code: 'HOODIE',
    name: 'Zip hoodie',
    price: 5900,
    variants: [
      { attributes: { colour: 'grey', size: 'M' }, stock: 8 },
      { attributes: { colour: 'grey', size: 'L' }, stock: 6 },
      { attributes: { colour: 'black', size: 'M' }, stock: 5 },
      { attributes: { colour: 'black', size: 'L' }, stock: 3 },
    ],
  },
  {
    productId: 'demo-sneaker',
    code: 'SNEAKER',
    name: 'Canvas sneaker',
    price: 7400,
    variants: ['40', '41', '42', '43', '44'].map((size, index) => ({ attributes: { size }, stock: [4, 7, 9, 6, 2][index]! })),
  },
  {
    productId: 'demo-mug',
    code: 'MUG',
    name: 'Enamel mug',
    price: 1400,
    variants: [
      { attributes: { colour: 'red' }, stock: 30 },
      { attributes: { colour: 'green' }, stock: 25 },
      { attributes: { colour: 'cream' }, stock: 18 },
    ],
  },
];

export const customers: CustomerPlan[] = [
  {
    name: 'Ada Lovelace',
    email: 'ada.lovelace@demo.example',
    phone: '+44 20 7946 0958',
    ledger: [
      { delta: 5000, reason: 'Welcome credit (demo data)' },
      { delta: -1800, reason: 'Spent on order DEMO-ORDER-1004 (demo data)' },
    ],
  },
  { name: 'Grace Hopper', email: 'grace.hopper@demo.example', ledger: [{ delta: 2500, reason: 'Welcome credit (demo data)' }] },
  {
    name: 'Alan Turing',
    email: 'alan.turing@demo.example',
    ledger: [
      { delta: 1000, reason: 'Welcome credit (demo data)' },
      { delta: 1400, reason: 'Refund for a returned enamel mug (demo data)' },
    ],
  },
  {
    name: 'Katherine Johnson',
    email: 'katherine.johnson@demo.example',
    phone: '+1 757 555 0142',
    ledger: [{ delta: 12000, reason: 'Goodwill credit for a late delivery (demo data)' }],
  },
  { name: 'Edsger Dijkstra', email: 'edsger.dijkstra@demo.example', ledger: [{ delta: 300, reason: 'Welcome credit (demo data)' }] },
  { name: 'Barbara Liskov', email: 'barbara.liskov@demo.example', ledger: [{ delta: 4200, reason: 'Gift card redeemed (demo data)' }] },
];

export const reservations: ReservationPlan[] = [
  { reference: 'DEMO-CART-1001', outcome: 'active', lines: [{ sku: 'DEMO-TEE-NAVY-M', quantity: 2 }, { sku: 'DEMO-MUG-RED', quantity: 1 }] },
  { reference: 'DEMO-CART-1002', outcome: 'active', lines: [{ sku: 'DEMO-HOODIE-GREY-L', quantity: 1 }] },
  { reference: 'DEMO-CART-1003', outcome: 'active', lines: [{ sku: 'DEMO-SNEAKER-42', quantity: 1 }, { sku: 'DEMO-TEE-NAVY-S', quantity: 1 }] },
  { reference: 'DEMO-ORDER-1004', outcome: 'committed', lines: [{ sku: 'DEMO-SNEAKER-41', quantity: 1 }, { sku: 'DEMO-MUG-GREEN', quantity: 2 }] },
  { reference: 'DEMO-CART-1005', outcome: 'released', lines: [{ sku: 'DEMO-HOODIE-BLACK-M', quantity: 2 }] },
];

/** `DEMO-TEE-NAVY-M`: the product's code and the attribute values, in the order written above. */
export function skuOf(product: ProductPlan, attributes: Record<string, string>): string {
  return ['DEMO', product.code, ...Object.values(attributes)].join('-').toUpperCase();
}

/** `Organic cotton tee, navy, M`. */
export function variantNameOf(product: ProductPlan, attributes: Record<string, string>): string {
  return [product.name, ...Object.values(attributes)].join(', ');
}
