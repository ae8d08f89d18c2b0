// The requests of the replay's refusals (hooks.js): for each status other
// than 2xx an operation declares, how the request Dredd built from the
// examples of its successful answer is changed so that the test edge
// answers that status, and the transactions no test edge can answer so,
// with why.
const http = require('http');

// unreproducibleWhy says why each status that stays skipped cannot be
// answered by a healthy test edge without changing it for the other
// transactions.
const unreproducibleWhy = {
  503: 'the test edge is ready, reads its ClickHouse and has read the day\'s usage, its miss gate is not full, and its webhooks are on: a 503 needs a cold or failing edge or one under load (TestOpenAPIDescribesLiveAnswers validates the cold edge\'s)',
};

// A refusal's client address: a new one each (X-Forwarded-For, trusted
// from loopback by the test edge), so that the invalid keys and failed
// sign-ins it sends count against no other request.
let addresses = 0;
function address() {
  addresses += 1;
  // A /64 each: the limits count an IPv6 caller by its /64.
  return `2001:db8:${(0xd000 + addresses).toString(16)}::1`;
}
// The addresses the 429s come from: one that sent more than 30 invalid
// keys in the last minute (the API), one that failed its sign-ins at
// lockedEmail (the account routes).
const keysBlocked = '2001:db8:429::1';
const signInsBlocked = '2001:db8:429::2';
const lockedEmail = 'locked@example.com';

// badParameter is, by path template, a parameter and a value out of its
// bounds (400); a template not named gets a parameter given twice.
const badParameter = {
  '/listings': ['limit', '0'],
  '/listings/{store}/{id}/history': ['days', '0'],
  '/listings/{store}/{id}/history.csv': ['days', '0'],
  '/listings/{store}/{id}/reviews': ['stars', 'none'],
  '/reviews/search': ['stars', 'none'],
  '/charts/{store}': ['chart', 'none'],
  '/listings/{store}/{id}/growth': ['from', 'yesterday'],
  '/listings/{store}/{id}/changes': ['limit', '0'],
  '/listings/{store}/{id}/changes.csv': ['limit', '0'],
  '/events': ['limit', '0'],
  '/events.csv': ['limit', '0'],
  '/changes': ['limit', '0'],
  '/compare': ['days', '0'],
  '/compare.csv': ['days', '0'],
};

// setQuery returns path with the query parameter name set to value.
function setQuery(path, name, value) {
  const [p, q] = path.split('?');
  const kept = q ? q.split('&').filter((kv) => !kv.startsWith(`${name}=`)) : [];
  kept.push(`${name}=${encodeURIComponent(value)}`);
  return `${p}?${kept.join('&')}`;
}

// setSegment returns path with its i-th segment (from 0, before the
// leading slash) set to value.
function setSegment(path, i, value) {
  const [p, q] = path.split('?');
  const parts = p.split('/');
  parts[i] = value;
  return parts.join('/') + (q ? `?${q}` : '');
}

// notFound returns path (under /api/v1, or /account) naming something
// the edge does not have, by template.
function notFound(template, path) {
  if (template.startsWith('/listings/{store}/{id}')) return setSegment(path, 5, 'no-such-listing');
  if (template.startsWith('/account/webhooks/{id}')) return setSegment(path, 3, 'wh_nosuchwebhook0000');
  switch (template) {
    case '/listings':
    case '/reviews/search':
      return setQuery(path, 'tag', 'no-such-topic');
    case '/charts/{store}':
      return setQuery(path, 'category', 'no-such-category');
    case '/tags/{slug}/{store}':
      return setSegment(path, 4, 'no-such-topic');
    case '/developers/{store}/{developer}':
      return setSegment(path, 5, 'No%20Such%20Developer');
    case '/categories/{store}/{category}':
      return setSegment(path, 5, 'no-such-category');
    case '/categories/{store}':
    case '/stores/{store}/stats':
      return setSegment(path, 4, 'no-such-store');
    case '/week/{id}':
      return setSegment(path, 4, '2000-W01');
    case '/exports/{day}/{file}':
    case '/exports/{day}/parquet/{table}/{storePartition}/{datePartition}/part-0.parquet':
    case '/exports/{day}/parquet/{table}/schema.json':
      return setSegment(path, 4, '2000-01-01');
    case '/exports/latest/parquet/{table}/{storePartition}/part-0.parquet':
      return setSegment(path, 8, 'part-9.parquet');
    case '/exports/latest/{set}/parquet/{table}/{storePartition}/part-0.parquet':
      return setSegment(path, 5, '2000-01-01');
    case '/compare':
    case '/compare.csv':
      return setQuery(path, 'listings', 'edge:no-such-listing,firefox:no-such-listing');
    default:
      return null;
  }
}

// ask sends a request to the edge of transaction t.
function ask(t, method, path, headers) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: t.host, port: t.port, method, path, headers }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
    req.end();
  });
}

module.exports = () => {
  let keysBlockedAt = 0;
  let signInsBlockedAt = 0;

  // blockKeys makes keysBlocked an address that sent more than 30
  // invalid keys in the last minute (again after 20 s: the window is a
  // minute).
  async function blockKeys(t) {
    if (Date.now() - keysBlockedAt < 20000) return;
    for (let i = 0; i < 31; i += 1) {
      await ask(t, 'GET', '/api/v1/tags', { Authorization: 'Bearer edge_invalid', 'X-Forwarded-For': keysBlocked });
    }
    keysBlockedAt = Date.now();
  }

  // blockSignIns makes signInsBlocked an address that failed its
  // sign-ins at lockedEmail.
  async function blockSignIns(t) {
    if (Date.now() - signInsBlockedAt < 20000) return;
    const wrong = `Basic ${Buffer.from(`${lockedEmail}:wrong password`).toString('base64')}`;
    for (let i = 0; i < 11; i += 1) {
      await ask(t, 'GET', '/account/webhooks', { Authorization: wrong, 'X-Forwarded-For': signInsBlocked });
    }
    signInsBlockedAt = Date.now();
  }

  return {
    // unreproducible says why the transaction of method template
    // answering status is not replayed, or '' when it is.
    unreproducible(template, method, status) {
      if (status === '409' && template === '/account/webhooks/{id}/test') {
        return 'a secret that does not open needs the service\'s webhook key changed under a registered webhook';
      }
      return unreproducibleWhy[status] || '';
    },

    // refusal changes transaction t (template answering status, its
    // path and headers already those of its successful answer) into the
    // request the edge answers with status.
    async refusal(t, template, status) {
      const h = t.request.headers;
      const account = t.fullPath.startsWith('/account/');
      switch (status) {
        case '304': {
          const got = await ask(t, t.request.method, t.fullPath, h);
          if (!got.headers.etag) throw new Error(`${t.fullPath} answered ${got.status} without an ETag`);
          h['If-None-Match'] = got.headers.etag;
          break;
        }
        case '400':
          if (account) {
            t.request.body = JSON.stringify({ url: 'http://127.0.0.1/edge-events' });
          } else if (badParameter[template]) {
            t.fullPath = setQuery(t.fullPath, ...badParameter[template]);
          } else {
            t.fullPath += `${t.fullPath.includes('?') ? '&' : '?'}x=1&x=2`;
          }
          break;
        case '401':
          h['X-Forwarded-For'] = address();
          h.Authorization = account
            ? `Basic ${Buffer.from('nobody@example.com:not the password').toString('base64')}`
            : 'Bearer edge_not_a_key_of_this_service';
          break;
        case '403':
          h.Origin = 'https://elsewhere.example';
          h['Sec-Fetch-Site'] = 'cross-site';
          h['Content-Type'] = 'text/plain';
          break;
        case '404': {
          const p = notFound(template, t.fullPath);
          if (!p) throw new Error(`no unknown name for ${template}`);
          t.fullPath = p;
          break;
        }
        case '405':
          t.request.method = 'PATCH';
          break;
        case '416':
          h.Range = 'bytes=999999999-';
          break;
        case '412':
          h['If-Match'] = '"0000"';
          break;
        case '406':
          h['Accept-Encoding'] = 'identity;q=0, *;q=0';
          break;
        case '409':
          // The test edge allows one webhook an account: the replay's
          // 201 made it.
          break;
        case '415':
          h['Content-Type'] = 'text/plain';
          break;
        case '429':
          if (account) {
            await blockSignIns(t);
            h['X-Forwarded-For'] = signInsBlocked;
            h.Authorization = `Basic ${Buffer.from(`${lockedEmail}:wrong password`).toString('base64')}`;
          } else {
            await blockKeys(t);
            h['X-Forwarded-For'] = keysBlocked;
          }
          break;
        default:
          throw new Error(`no request for ${status}`);
      }
      t.request.uri = t.fullPath;
    },
  };
};
