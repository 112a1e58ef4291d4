import pg from 'pg';

interface Field {
  name: string;
  dataTypeID: number;
}

/** What pg works out from a statement's row description before it can read a row. */
interface RowShape {
  fields: Field[];
  parsers: unknown[];
  emptyRow: Record<string, null>;
}

/** The parts of pg's Result that `addFields` fills in; not in pg's published types. */
interface ResultInternals {
  fields: Field[];
  _parsers: unknown[];
  _prebuiltEmptyResultObject: Record<string, null>;
}

// One entry per prepared statement: a small fixed set (see statementName in database.ts).
const shapes = new Map<string, RowShape>();

const sameFields = (known: Field[], described: Field[]) =>
  known.length === described.length && known.every((field, index) => field.name === described[index]!.name && field.dataTypeID === described[index]!.dataTypeID);

/**
 * pg's Result for a prepared statement, which remembers the row shape of the statement's last
 * row description. pg rebuilds it on every execution: a parser looked up per column and an
 * empty row built as a dictionary object and copied, about 6 µs for a variant read with its
 * caller check (a fiftieth of the request's CPU). The shape is reused only while the server
 * describes the same columns with the same types.
 */
export class StatementResult extends pg.Result {
  /** pg's own, missing from its published types: one data row, parsed with the current shape. */
  declare parseRow: (values: (string | null)[]) => Record<string, unknown>;

  constructor(private readonly statement: string) {
    super(undefined as unknown as string, undefined as unknown as typeof pg.types);
  }

  addFields(fields: Field[]): void {
    const internals = this as unknown as ResultInternals;
    const known = shapes.get(this.statement);
    if (known && sameFields(known.fields, fields)) {
      internals.fields = fields;
      internals._parsers = known.parsers;
      internals._prebuiltEmptyResultObject = known.emptyRow;
      return;
    }
    (pg.Result.prototype as unknown as { addFields(fields: Field[]): void }).addFields.call(this, fields);
    const emptyRow: Record<string, null> = {};
    for (const field of fields) emptyRow[field.name] = null;
    shapes.set(this.statement, { fields, parsers: internals._parsers, emptyRow });
  }
}
