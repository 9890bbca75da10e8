/**
 * The settings of the server itself: where it listens, and who may use it how (the token, CORS,
 * the browser page, the drain on SIGTERM).
 */
import { bool, int, list, text } from './setting-kinds.ts';

const PORT = int({
  name: 'PORT',
  key: 'port',
  min: 0,
  max: 65535,
  default: 8080,
  description: 'listening port',
});

/** Where it listens. When both variables are set, SageMaker's wins: it is first, its default `PORT`. */
export const LISTENING = [
  int({
    name: 'SAGEMAKER_BIND_TO_PORT',
    key: 'port',
    min: 1,
    max: 65535,
    default: { doc: '`PORT`', compute: (s) => s.get(PORT) },
    description: 'the port SageMaker gives the container; when set it wins over `PORT`',
  }),
  PORT,
  text({ name: 'HOST', key: 'host', default: '0.0.0.0', description: 'listening address' }),
] as const;

/** Who may use it, and how it stops. */
export const ACCESS = [
  text({
    name: 'AUTH_TOKEN',
    key: 'authToken',
    default: undefined,
    description:
      "when set, every route but `/ping` (and the page's static files) requires `Authorization: Bearer <token>` (for use outside SageMaker; a browser's WebSocket may carry it as a `bearer.<base64url token>` subprotocol)",
  }),
  list({
    name: 'CORS_ORIGINS',
    key: 'corsOrigins',
    default: [],
    description: 'comma-separated origins (or `*`) allowed by CORS; unset sends no CORS headers',
  }),
  bool({
    name: 'WEB_PAGE',
    key: 'webPage',
    default: true,
    description: 'serve the [browser page](../README.md#browser-page) at `GET /` (`false` in both images)',
  }),
  int({
    name: 'SHUTDOWN_GRACE_S',
    key: 'shutdownGraceS',
    min: 0,
    max: 600,
    default: 25,
    description:
      "on SIGTERM, the deadline for finishing accepted work; then what remains is cut (close frames 1001, then every connection destroyed within 1 s more) and logged by request id, so the process exits before SageMaker's SIGKILL at 30 s",
  }),
] as const;
