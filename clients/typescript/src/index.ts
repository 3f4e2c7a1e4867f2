// A typed client for the Imago API: openapi-fetch over the types that openapi-typescript generated
// from docs/openapi.yaml (src/schema.d.ts; regenerate with `npm run generate`).
import createClient, { type Client, type Middleware } from 'openapi-fetch';
import type { components, operations, paths } from './schema.js';

export type { components, operations, paths };
export type ImagoClient = Client<paths>;

export interface ImagoClientOptions {
  /** The server's address, e.g. "https://imago.example.com" (no trailing /v1). */
  baseUrl: string;
  /** The account's API key (`imago_sk_...`), sent as the `api-secret` header. */
  apiSecret?: string;
  /** The operator token, sent as `Authorization: Bearer` (admin operations only). */
  adminToken?: string;
  /** A fetch implementation (defaults to the global one). */
  fetch?: typeof fetch;
}

/** Creates a client; every call is typed by path, method, parameters, body and response. */
export function createImagoClient(options: ImagoClientOptions): ImagoClient {
  const client = createClient<paths>({ baseUrl: options.baseUrl.replace(/\/+$/, ''), fetch: options.fetch });
  const auth: Middleware = {
    onRequest({ request }) {
      if (options.apiSecret && !request.headers.has('api-secret')) request.headers.set('api-secret', options.apiSecret);
      if (options.adminToken && !request.headers.has('authorization')) {
        request.headers.set('authorization', `Bearer ${options.adminToken}`);
      }
      return request;
    },
  };
  client.use(auth);
  return client;
}

/** The error envelope every error answer carries. */
export type ImagoError = components['schemas']['Error'];
