// Dredd's hooks for the replay of the served description against a test
// edge (edge/openapi_tools_test.go). They add what a description cannot
// hold, and take nothing from what it says:
//
//   - the key (EDGE_DREDD_KEY) on /api/v1 calls, the account's
//     credentials (EDGE_DREDD_BASIC) on the webhook routes, and the prefix
//     /api/v1 (the description's server, which Dredd does not apply) on
//     the paths under it;
//   - the id of the webhook the replay registered, in place of the
//     example's, on the routes of one webhook;
//   - no cursor: a cursor is valid only with the filters and the data it
//     was issued for (and with `since` on the feeds it is a 400);
//   - no format: Dredd fills it with its enum's first value for each
//     media type an answer declares, and the format named wins over the
//     Accept Dredd sends for the media type (format= is tested in
//     edge/listfiles_test.go);
//   - the response headers the description (EDGE_DREDD_SPEC) does not mark
//     `required` are not expected: Dredd's OpenAPI 3 reader ignores
//     `required` on a header and would expect every header declared;
//   - Content-Type is compared by its media type: Dredd compares the
//     whole value, and the edge's text answers name their charset
//     (`text/csv; charset=utf-8`), a parameter of the media type the
//     description keys them by;
//   - a JSON answer is checked against the description's schema of it
//     (its references inlined), not against a schema guessed from the
//     example, which would allow only the example's types (a null where
//     the example has one, an array where it has one);
//   - an NDJSON answer is checked line by line, each a JSON object;
//   - a text answer (CSV, server-sent events) is checked by its first
//     line, the columns or the stream's `retry:`, against the example's:
//     Dredd compares a body without a JSON schema byte for byte with the
//     example, which is another request's answer, cut short;
//   - Dredd sends one request for each response an operation declares,
//     built from the examples of its 2xx answer: for every other status
//     the hooks change that request into one the status is the answer to
//     (refusal, below): an ETag the edge gave for 304, a parameter given
//     twice or out of its bounds for 400, a wrong key or wrong account
//     credentials for 401, a change sent from another site for 403, an
//     unknown listing, topic, category, store, edition, day or webhook
//     for 404, another method for 405, no acceptable coding for 406, one
//     webhook past the account's most (the test edge allows 1) for 409,
//     a body not declared JSON for 415, and for 429 an address that sent
//     more than 30 invalid keys this minute (the API) or failed its
//     sign-ins (the account routes). Each refusal comes from a client
//     address of its own (X-Forwarded-For, which the test edge trusts
//     from loopback), so that the counts it makes (invalid keys, failed
//     sign-ins) refuse nothing else. What stays skipped, and why, is
//     `unreproducible`.
const fs = require('fs');
const hooks = require('hooks');
const refusals = require('./refusals');

const key = process.env.EDGE_DREDD_KEY;
const basic = process.env.EDGE_DREDD_BASIC;
const spec = JSON.parse(fs.readFileSync(process.env.EDGE_DREDD_SPEC, 'utf8'));
let webhook = '';
// skipped lists the transactions not replayed, each with why.
const skipped = [];

const { unreproducible, refusal } = refusals();

function withoutCursor(path) {
  const [p, q] = path.split('?');
  if (!q) return p;
  const kept = q.split('&').filter((kv) => !kv.startsWith('cursor=') && !kv.startsWith('format='));
  return kept.length ? `${p}?${kept.join('&')}` : p;
}

// firstLine returns the first line of a text body, without a byte-order
// mark or a line end.
function firstLine(body) {
  return String(body || '').replace(/^\uFEFF/, '').split(/\r?\n/)[0];
}

// declaredHeaders returns the headers the description declares on the
// answer of method path with status, resolving references.
function declaredHeaders(path, method, status) {
  const op = (spec.paths[path] || {})[method.toLowerCase()];
  if (!op) return null;
  let response = op.responses[status];
  if (response && response.$ref) response = resolve(response.$ref);
  if (!response) return null;
  const out = {};
  for (const [name, h] of Object.entries(response.headers || {})) {
    out[name.toLowerCase()] = h.$ref ? resolve(h.$ref) : h;
  }
  return out;
}

// declaredSchema returns the JSON schema of the answer of method path
// with status in mediaType, its references resolved inline, as a string
// (Dredd's bodySchema), or undefined when the description gives none.
function declaredSchema(path, method, status, mediaType) {
  const op = (spec.paths[path] || {})[method.toLowerCase()];
  if (!op) return undefined;
  let response = op.responses[status];
  if (response && response.$ref) response = resolve(response.$ref);
  const content = response && response.content && response.content[mediaType];
  if (!content || !content.schema) return undefined;
  return JSON.stringify(inline(content.schema, []));
}

// inline replaces every $ref of schema by what it names, and drops the
// annotations a JSON Schema validator does not read (example, x-*).
function inline(schema, seen) {
  if (Array.isArray(schema)) return schema.map((s) => inline(s, seen));
  if (!schema || typeof schema !== 'object') return schema;
  if (schema.$ref) {
    if (seen.includes(schema.$ref)) return {};
    return inline(resolve(schema.$ref), seen.concat([schema.$ref]));
  }
  const out = {};
  for (const [k, v] of Object.entries(schema)) {
    if (k === 'example' || k === 'examples' || k.startsWith('x-')) continue;
    out[k] = k === 'properties' ? Object.fromEntries(Object.entries(v).map(([p, s]) => [p, inline(s, seen)])) : inline(v, seen);
  }
  return out;
}

function resolve(ref) {
  return ref.replace(/^#\//, '').split('/').reduce((o, k) => o[k.replace(/~1/g, '/').replace(/~0/g, '~')], spec);
}

hooks.beforeEach((transaction, done) => {
  const template = transaction.origin.resourceName;
  const status = String(transaction.expected.statusCode);
  const why = unreproducible(template, transaction.request.method, status);
  if (why) {
    transaction.skip = true;
    skipped.push(`${transaction.request.method} ${template} ${status}: ${why}`);
    done();
    return;
  }
  const declared = declaredHeaders(template, transaction.request.method, status);
  if (!declared) {
    transaction.fail = `hooks.js: the description has no ${transaction.request.method} ${template} answering ${status}`;
  } else {
    for (const name of Object.keys(transaction.expected.headers)) {
      const h = declared[name.toLowerCase()];
      if (h && !h.required) delete transaction.expected.headers[name];
    }
  }
  for (const name of Object.keys(transaction.expected.headers)) {
    if (name.toLowerCase() === 'content-type') {
      transaction.expectedMediaType = transaction.expected.headers[name];
      delete transaction.expected.headers[name];
    }
  }
  const ndjson = transaction.expectedMediaType === 'application/x-ndjson';
  if (transaction.expectedMediaType && transaction.expectedMediaType.endsWith('json') && !ndjson) {
    // A JSON answer is checked against the description's schema: without
    // one, Dredd checks it against a schema it guesses from the example
    // (the example's nulls and arrays as the only types allowed), which is
    // another request's answer.
    const schema = declaredSchema(template, transaction.request.method, status, transaction.expectedMediaType);
    if (schema) {
      transaction.expected.bodySchema = schema;
      delete transaction.expected.body;
    }
  }
  if (ndjson) {
    // NDJSON is checked line by line: each a JSON object.
    transaction.expectedLines = true;
    delete transaction.expected.body;
  }
  if (transaction.expectedMediaType && !transaction.expectedMediaType.endsWith('json')) {
    // A file (application/gzip) has no example to compare: its media
    // type and status are what the replay checks.
    if (transaction.expectedMediaType.startsWith('text/')) {
      transaction.expectedFirstLine = firstLine(transaction.expected.body);
    }
    delete transaction.expected.body;
  }
  const headers = transaction.request.headers;
  if (transaction.fullPath.startsWith('/account/')) {
    headers.Authorization = `Basic ${basic}`;
    if (webhook) {
      transaction.fullPath = transaction.fullPath.replace(/^\/account\/webhooks\/[^/?]+/, `/account/webhooks/${webhook}`);
    }
  } else {
    headers.Authorization = `Bearer ${key}`;
    transaction.fullPath = `/api/v1${withoutCursor(transaction.fullPath)}`;
  }
  transaction.request.uri = transaction.fullPath;
  if (status === '206') {
    // A file's ranges: one, or two apart (multipart/byteranges).
    headers.Range = transaction.expectedMediaType === 'multipart/byteranges' ? 'bytes=0-3,1000-1099' : 'bytes=0-3';
  }
  if (status.startsWith('2')) {
    done();
    return;
  }
  refusal(transaction, template, status).then(() => done(), (err) => {
    transaction.fail = `hooks.js: the request for ${status}: ${err}`;
    done();
  });
});

hooks.afterEach((transaction) => {
  if (transaction.expectedMediaType && transaction.real) {
    const got = String(transaction.real.headers['content-type'] || '').split(';')[0].trim();
    if (got !== transaction.expectedMediaType) {
      transaction.fail = `Content-Type ${got}, want ${transaction.expectedMediaType}`;
    } else if (transaction.expectedFirstLine !== undefined && firstLine(transaction.real.body) !== transaction.expectedFirstLine) {
      transaction.fail = `first line ${JSON.stringify(firstLine(transaction.real.body))}, want ${JSON.stringify(transaction.expectedFirstLine)}`;
    } else if (transaction.expectedLines) {
      const body = String(transaction.real.body || '');
      if (body !== '' && !body.endsWith('\n')) transaction.fail = 'NDJSON not ended by a newline';
      for (const line of body.split('\n').slice(0, -1)) {
        try {
          const v = JSON.parse(line);
          if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new Error('not an object');
        } catch (e) {
          transaction.fail = `NDJSON line ${JSON.stringify(line.slice(0, 80))}: ${e.message}`;
        }
      }
    }
  }
  if (transaction.request.method === 'POST' && transaction.fullPath === '/account/webhooks' && transaction.real && transaction.real.statusCode === 201) {
    try {
      webhook = JSON.parse(transaction.real.body).id || '';
    } catch (e) {
      webhook = '';
    }
  }
});

hooks.afterAll((transactions, done) => {
  for (const line of skipped) console.log(`hooks.js: skipped ${line}`);
  done();
});
