/** One JSON-RPC 2.0 call over HTTP POST; a node's error answer is thrown with the method's name. */
export async function jsonRpc<T>(url: string, method: string, params: unknown[] = [], headers: Record<string, string> = {}): Promise<T> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    signal: AbortSignal.timeout(30_000),
  });
  const body = (await res.json()) as { result?: T; error?: { message: string } | null };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result as T;
}
