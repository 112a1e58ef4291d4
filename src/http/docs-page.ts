/**
 * What /docs (@fastify/swagger-ui's page) lacks on a phone. The plugin's page has no viewport
 * meta and no option to add one, so a phone lays it out 980 px wide and shrinks it; the tag is
 * put in after the charset, the one line of the page this relies on. With it, the styles below
 * keep the operations, their parameters, models and examples within the screen: long paths
 * and names wrap, tables and code scroll inside their own box instead of the page.
 */
export function withViewport(html: string): string {
  return html.replace('<meta charset="UTF-8">', '<meta charset="UTF-8">\n      <meta name="viewport" content="width=device-width, initial-scale=1">');
}

export const DOCS_PAGE_CSS = `
.swagger-ui .topbar { display: none; }
@media (max-width: 600px) {
  .swagger-ui .wrapper { padding: 0 0.5rem; }
  .swagger-ui .info { margin: 1rem 0; }
  .swagger-ui .info .title { font-size: 1.5rem; }
  .swagger-ui .info .title small { display: inline-block; }
  .swagger-ui .info pre, .swagger-ui .markdown pre, .swagger-ui .renderedMarkdown pre { white-space: pre-wrap; overflow-wrap: anywhere; }
  .swagger-ui .markdown, .swagger-ui .renderedMarkdown, .swagger-ui .info .description { overflow-wrap: anywhere; }
  .swagger-ui .markdown table, .swagger-ui .renderedMarkdown table { display: block; overflow-x: auto; }
  .swagger-ui .scheme-container { padding: 0.75rem 0; }
  .swagger-ui .scheme-container .schemes { flex-wrap: wrap; gap: 0.5rem; }
  .swagger-ui .scheme-container .schemes > label, .swagger-ui .servers > label { margin-right: 0; max-width: 100%; }
  .swagger-ui .servers > label select { max-width: 100%; }
  .swagger-ui .opblock-tag { padding: 0.5rem 0; font-size: 1.1rem; flex-wrap: wrap; }
  .swagger-ui .opblock-tag small { padding: 0; flex-basis: 100%; }
  .swagger-ui .opblock .opblock-summary { flex-wrap: wrap; }
  .swagger-ui .opblock .opblock-summary-path, .swagger-ui .opblock .opblock-summary-path__deprecated { max-width: 100%; flex-shrink: 1; overflow-wrap: anywhere; word-break: break-all; }
  .swagger-ui .opblock .opblock-summary-description { flex-basis: 100%; overflow-wrap: anywhere; }
  .swagger-ui .opblock .opblock-section-header { flex-wrap: wrap; }
  .swagger-ui .opblock-body pre, .swagger-ui .highlight-code, .swagger-ui .microlight { max-width: 100%; overflow-x: auto; }
  .swagger-ui table { display: block; overflow-x: auto; }
  .swagger-ui .parameters-col_description { width: auto; }
  .swagger-ui .model-box, .swagger-ui section.models { max-width: 100%; overflow-x: auto; }
  .swagger-ui .response-col_description { overflow-wrap: anywhere; }
}
`;
