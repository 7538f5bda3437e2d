/** Types of `test-oidc-provider.mjs` (plain JavaScript, so docs/http.md can run it with node; typed for the tests). */
import type { JWK } from 'jose';

export declare const SCOPES: readonly string[];
export interface MachineClient {
  client_id: string;
  client_secret: string;
}
export interface HostClient {
  client_id: string;
  redirect_uri: string;
}
export interface TestProvider {
  issuer: string;
  port: number;
  keys: (JWK & { kid: string })[];
  groups: Record<string, string[]>;
  clients: { machine: MachineClient; opaque: MachineClient; introspector: MachineClient; host: HostClient };
  login(account: string): void;
  setResource(url: string): void;
  setTtl(seconds: number): void;
  close(): Promise<void>;
}
export declare function signingKey(kid?: string): Promise<JWK & { kid: string }>;
export declare function startOidcProvider(options: {
  resource?: string;
  port?: number;
  keys?: JWK[];
  groups?: Record<string, string[]>;
  ttl?: number;
}): Promise<TestProvider>;
export declare function clientCredentialsToken(
  issuer: string,
  client: MachineClient,
  resource: string,
  scope?: string,
): Promise<string>;
export declare function authorizationCodeToken(
  issuer: string,
  client: HostClient,
  resource: string,
  scope?: string,
): Promise<string>;
