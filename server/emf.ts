/** The EMF dimension parser that the settings table reads; the reporter is observability/emf.ts. */
export { parseDimensions } from './observability/emf.ts';
