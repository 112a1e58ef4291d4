import { buildTestApp } from './helpers/test-app.js';
const t = await buildTestApp();
const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
console.log(JSON.stringify(doc.paths['/api/variants/{id}'].put.parameters, null, 1));
console.log(JSON.stringify(doc.paths['/api/users'].get.parameters.find((p: any) => p.name === 'cursor'), null, 1));
await t.close();
