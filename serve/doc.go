// Package serve is Churon's local OpenAI-compatible API server: a front
// end beside the window (ui/) and the command line (cli/), built only on
// the session's API (app/api/session), so that editors, agents and
// scripts use the loaded model the way they use OpenAI's — GET
// /v1/models, POST /v1/chat/completions and POST /v1/completions,
// streamed as server-sent events or not.
//
// Every request is an answer in the session's batch (continuous
// batching): it runs beside the window's chats and the other requests,
// under the same cap and fair queue, and it keeps a KV cache: a request
// whose messages extend an earlier one's (its prompt and answer, as chat
// clients send them) reuses that request's cache, also after a restart,
// and says so in usage.prompt_tokens_details.cached_tokens. A request
// may name a stored conversation ("conversation": ID) to continue it;
// with Config.Store, every request is kept in the history.
//
// Safe by default: it listens on 127.0.0.1 only; any other address needs
// an API key (Authorization: Bearer); no CORS headers unless origins are
// configured, a POST must be application/json (which a web page cannot
// send to another origin without CORS), a request from a browser origin
// that is not allowed is refused, and on loopback without a key the Host
// must be a loopback name (no DNS rebinding). Bodies, messages,
// max_tokens and requests in flight are bounded. A client that goes away
// cancels its answer within one token; a slow one is written to as fast
// as it reads, from memory, never holding the batch. Malformed requests
// get OpenAI's error shape with a 4xx status and a message that says what
// is wrong.
package serve
