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
