/**
 * An RPC endpoint's URL without its credentials, and the Authorization header that carries them instead
 * (HTTP basic auth): fetch, and ethers' requests on top of it, refuse a URL that holds credentials, and a
 * URL is what RPC libraries repeat in their errors. A key in the path or the query stays in the URL (the
 * provider reads it there); errors are scrubbed of URLs where they are made (rpc-errors.ts).
 */
export interface RpcEndpoint {
  url: string;
  authorization?: string;
}

/**
 * What of an endpoint's URL may be a credential, to take out of a node's answer that repeats it (a refusal
 * such as "unknown API key …" goes into an error message): the userinfo, every query value and the longer
 * path segments (a key in the path). Values too short to be a key are left, or every "1" would go.
 */
export function credentialsOf(rpcUrl: string): string[] {
  const u = new URL(rpcUrl);
  const parts = [u.username, u.password, ...u.searchParams.values(), ...u.pathname.split('/')].map((p) => {
    try {
      return decodeURIComponent(p);
    } catch {
      return p;
    }
  });
  return [...new Set(parts.filter((p) => p.length >= 8))];
}

export function rpcEndpoint(rpcUrl: string): RpcEndpoint {
  const u = new URL(rpcUrl);
  if (!u.username && !u.password) return { url: rpcUrl };
  const authorization = 'Basic ' + Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`).toString('base64');
  u.username = '';
  u.password = '';
  return { url: u.toString(), authorization };
}
