/**
 * The hosted pages' stylesheet, served from this origin (the pages' policy allows no inline
 * style). One column that fits 390 px and stays readable at 1280 px; colours at WCAG AA
 * contrast or better; a visible focus ring; the skip link shown when focused.
 */
export const PAGE_STYLES = `
*, *::before, *::after { box-sizing: border-box; }
html { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; font-size: 100%; line-height: 1.5; color: #1a1a1a; background: #f4f4f5; }
body { margin: 0; padding: 1rem; }
header, main { max-width: 26rem; margin: 0 auto; }
header { padding: 1rem 0; }
.brand { font-weight: 700; font-size: 1.25rem; margin: 0; max-height: 3rem; max-width: 12rem; }
main { background: #ffffff; border: 1px solid #d4d4d8; border-radius: 0.5rem; padding: 1.5rem; }
main:focus { outline: none; }
h1 { font-size: 1.5rem; line-height: 1.25; margin: 0 0 1rem; }
.stack { display: flex; flex-direction: column; gap: 0.5rem; }
label { font-weight: 600; margin-top: 0.5rem; }
input { font: inherit; padding: 0.625rem 0.75rem; border: 1px solid #71717a; border-radius: 0.375rem; min-height: 2.75rem; width: 100%; }
input[aria-invalid="true"] { border-color: #b91c1c; }
button { font: inherit; min-height: 2.75rem; padding: 0.5rem 1rem; border-radius: 0.375rem; border: 1px solid #3f3f46; background: #ffffff; color: #18181b; cursor: pointer; margin-top: 0.5rem; }
button.primary { background: #1d4ed8; border-color: #1d4ed8; color: #ffffff; }
:focus-visible { outline: 3px solid #1d4ed8; outline-offset: 2px; }
.buttons { display: flex; flex-wrap: wrap; gap: 0.5rem; }
.buttons button { flex: 1 1 8rem; }
.error { color: #991b1b; background: #fef2f2; border: 1px solid #fecaca; border-radius: 0.375rem; padding: 0.5rem 0.75rem; margin: 0; }
.notice { color: #14532d; background: #f0fdf4; border: 1px solid #bbf7d0; border-radius: 0.375rem; padding: 0.5rem 0.75rem; margin: 0; }
.hint { margin: 0; color: #3f3f46; font-size: 0.875rem; }
.app-logo { width: 4rem; height: 4rem; object-fit: contain; }
ul { margin: 0; padding-left: 1.25rem; }
.skip { position: absolute; left: -10000px; top: 0; background: #ffffff; color: #1d4ed8; padding: 0.5rem; }
.skip:focus { left: 0.5rem; top: 0.5rem; }
`;
