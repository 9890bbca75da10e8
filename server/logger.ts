/** The logger's names that the settings table and config.ts read; the logger is observability/logger.ts. */
export { LOG_LEVELS, ortSeverity, type LogLevel } from './observability/logger.ts';
