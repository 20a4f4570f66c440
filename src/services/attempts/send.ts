/**
 * Sending one attempt's upstream request, the same way for every API: POST through the keep-alive pools with the
 * provider's timeouts and the client's cancellation; a non-2xx answer read and mapped by the protocol's error parser.
 */
import type { Timeouts } from '../../core/catalog-types.js';
import type { UpstreamError } from '../../core/provider-errors.js';
import type { Cancellation, UpstreamExchange, UpstreamHttp } from '../../providers/http.js';

export type ErrorParser = (status: number, text: string, headers: Record<string, string | string[] | undefined>) => UpstreamError;

/** One upstream request as a protocol builds it. */
export interface UpstreamRequest {
  url: URL;
  headers: Record<string, string>;
  /** Buffer[]: parts written in turn (the headers then carry their total as content-length). */
  body: string | Buffer | Buffer[];
}

/** Sends `req`; resolves with the 2xx exchange (the caller closes it), or throws the mapped UpstreamError. */
export async function sendAttempt(http: UpstreamHttp, req: UpstreamRequest, parseError: ErrorParser, timeouts: Timeouts, cancel: Cancellation): Promise<UpstreamExchange> {
  const res = await http.post({ url: req.url, headers: req.headers, body: req.body, timeouts, cancel });
  if (res.statusCode < 200 || res.statusCode >= 300) {
    const text = await res.text().catch(() => '');
    res.close();
    throw parseError(res.statusCode, text, res.headers);
  }
  return res;
}

/** Sends `req` and reads its whole 2xx answer as text (the exchange closed either way). */
export async function sendForText(http: UpstreamHttp, req: UpstreamRequest, parseError: ErrorParser, timeouts: Timeouts, cancel: Cancellation): Promise<string> {
  const res = await sendAttempt(http, req, parseError, timeouts, cancel);
  try {
    return await res.text();
  } finally {
    res.close();
  }
}
