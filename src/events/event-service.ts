/**
 * What other areas do with the events' rows, which only this folder writes (record() in
 * event-recorder.ts adds them): an erasure scrubs a person's values from them, a data export reads
 * them (privacy). The statements are event-repository.ts's, handed on as they are; other areas
 * import this file, never the repository (scripts/check-layers.ts).
 */
export { actorEventsAboutOthersPage, erasePersonalValues, subjectEventsPage } from './event-repository.js';
