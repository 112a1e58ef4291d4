import type { ComponentChildren } from 'preact';

export interface Column<Item> {
  /** The column's name: its header, and the caption of each cell when rows become cards (below 600px). */
  label: string;
  /** Shown in the header instead of the label (a select-all box, say); the label still names the cards' cells. */
  header?: ComponentChildren;
  cell: (item: Item) => ComponentChildren;
  numeric?: boolean;
  /** Long unbroken text (SKUs, URLs) that may wrap anywhere. */
  wraps?: boolean;
}

/** Every list of the console: a table that turns into cards on narrow screens. */
export function DataTable<Item extends { id: string }>(props: {
  items: readonly Item[];
  columns: readonly Column<Item>[];
  compact?: boolean;
  className?: string;
  rowClass?: (item: Item) => string | undefined;
}) {
  const classes = ['cards', props.compact ? 'compact' : '', props.className ?? ''].filter(Boolean).join(' ');
  return (
    <div class="table-wrap">
      <table class={classes}>
        <thead>
          <tr>
            {props.columns.map((column) => (
              <th scope="col" key={column.label}>
                {column.header ?? column.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {props.items.map((item) => (
            <tr key={item.id} class={props.rowClass?.(item)}>
              {props.columns.map((column) => (
                <td key={column.label} data-label={column.label} class={[column.numeric ? 'number' : '', column.wraps ? 'sku' : ''].filter(Boolean).join(' ') || undefined}>
                  {/* One box for the value, so a card's grid puts it beside the column's name whatever it holds. */}
                  <div class="cell">{column.cell(item)}</div>
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
