#!/usr/bin/env node
// An OpenAI-compatible upstream over HTTP/2 (TLS, ALPN h2; HTTP/1.1 also accepted) for the concurrency benchmark;
// plain HTTP/1.1 without TLS_KEY.
// Every streamed answer starts at once with a chunk whose content is `t=<Date.now()> ` (when the upstream sent its
// first byte), then MOCK_CHUNKS chunks MOCK_CHUNK_GAP_MS apart, a usage chunk and [DONE].
// Env: PORT, TLS_KEY, TLS_CERT (PEM files), MOCK_CHUNKS (default 10), MOCK_CHUNK_GAP_MS (default 1000).
import http2 from 'node:http2';
import http from 'node:http';
import { readFileSync } from 'node:fs';

const port = Number(process.env.PORT ?? 9443);
const chunks = Number(process.env.MOCK_CHUNKS ?? 10);
const gap = Number(process.env.MOCK_CHUNK_GAP_MS ?? 1000);
const usage = { prompt_tokens: 12, completion_tokens: chunks, total_tokens: 12 + chunks };
const chunk = (model, delta, finish = null) =>
  `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1700000000, model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

const handler = (req, res) => {
  let body = '';
  req.on('data', (d) => (body += d));
  req.on('end', () => {
    let parsed = {};
    try {
      parsed = JSON.parse(body);
    } catch {
      res.writeHead(400).end('{"error":{"message":"bad json"}}');
      return;
    }
    const model = parsed.model ?? 'bench-model';
    if (!parsed.stream) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion', created: 1700000000, model, choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], usage }));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.write(chunk(model, { role: 'assistant', content: `t=${Date.now()} ` }));
    let i = 0;
    const timer = setInterval(() => {
      if (res.destroyed || res.writableEnded) return clearInterval(timer);
      if (i++ < chunks) return void res.write(chunk(model, { content: 'word ' }));
      clearInterval(timer);
      res.write(chunk(model, {}, 'stop'));
      res.write(`data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1700000000, model, choices: [], usage })}\n\n`);
      res.end('data: [DONE]\n\n');
    }, gap);
    res.on('close', () => clearInterval(timer));
  });
};
const server = process.env.TLS_KEY
  ? http2.createSecureServer({ key: readFileSync(process.env.TLS_KEY), cert: readFileSync(process.env.TLS_CERT), allowHTTP1: true, settings: { maxConcurrentStreams: 1000 } }, handler)
  : http.createServer(handler);
server.listen({ port, host: '127.0.0.1', backlog: 4096 }, () => console.log(`mock upstream on ${process.env.TLS_KEY ? 'https' : 'http'}://127.0.0.1:${port}/v1`));
