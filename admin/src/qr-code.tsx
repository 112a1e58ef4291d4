import { encode } from 'uqr';

/**
 * A QR code drawn as one SVG path of its dark modules (uqr encodes; nothing is set as HTML, so
 * the text, which holds the account's email, never reaches the page as markup).
 */
export function QrCode(props: { text: string; label: string }) {
  const { size, data } = encode(props.text, { border: 2 });
  let path = '';
  data.forEach((row, y) => row.forEach((dark, x) => void (dark && (path += `M${x} ${y}h1v1h-1z`))));
  return (
    <svg class="qr-code" viewBox={`0 0 ${size} ${size}`} width={size * 4} height={size * 4} role="img" aria-label={props.label} shape-rendering="crispEdges">
      <rect width={size} height={size} fill="#fff" />
      <path d={path} fill="#000" />
    </svg>
  );
}
