// A real OAuth 2.1 / OpenID provider for the auth tests: oidc-provider 9.13.3 (installed by
// scripts/setup-node.sh into $MCP_TOOLBELT_CACHE/oidc) on loopback.
//
//   node tests/oidc/provider.mjs --resource URL [--port N]
//
// It issues JWT access tokens for one resource (RFC 8707 resource indicators) through the
// client_credentials grant, to two confidential clients with different scopes:
//   reader / reader-secret   scopes "notes:read"
//   writer / writer-secret   scopes "notes:read notes:write admin"
// Either may ask for any of the scopes (an MCP client asks for what the server's 401 or its
// metadata lists); the token carries only those its client is granted.
// and opaque access tokens (checked by RFC 7662 introspection) to a third:
//   legacy / legacy-secret   scopes "notes:read notes:write"
// The resource server introspects as mcp-server / mcp-server-secret (the only client allowed
// to); tokens are revoked at /token/revocation (RFC 7009) by the client they were issued to.
// Its first stdout line is `issuer=<URL>` once it listens (port 0 picks a free port).
//
// Signing keys rotate through admin endpoints of this script (not part of oidc-provider); the
// provider is rebuilt behind the same listener with the new key set, so the issuer stays put:
//   POST /admin/rotate   a new RS256 key signs from now on; the old one stays published
//   POST /admin/retire   every key but the newest is removed from the JWKS
// Bad tokens for the verifier's tests, forged here with `jose` (oidc-provider's own JOSE library):
//   GET /admin/jwks-fetches   how many times the JWKS was fetched (for the rate-limit test)
//   POST /admin/hang-jwks     from now on the JWKS is never answered (an issuer that hangs)
//   GET /admin/forge?case=NAME  -> the token as text/plain. NAME is one of: expired, not-yet-valid,
//   wrong-audience, wrong-issuer, alg-none, hs256-public-key, unknown-kid, tampered, good,
//   iat-future, iat-ahead-10s, crit-unknown, crit-b64, crit-empty, crit-not-array, crit-not-strings,
//   kid-number, raw-good (good = a well-formed token signed with the current key, the control
//   case; raw-good the same through the raw signer the crit-* and kid-number cases use).
import http from 'node:http';
import path from 'node:path';
import crypto from 'node:crypto';

function arg(name, fallback) {
    const i = process.argv.indexOf(`--${name}`);
    return i >= 0 ? process.argv[i + 1] : fallback;
}

const resource = arg('resource');
if (!resource) {
    console.error('provider.mjs: --resource URL is required');
    process.exit(2);
}
const port = Number(arg('port', '0'));
const cache = process.env.MCP_TOOLBELT_CACHE;
if (!cache) {
    console.error('provider.mjs: MCP_TOOLBELT_CACHE is not set (source scripts/env.sh)');
    process.exit(2);
}
// stdout carries only the issuer line: oidc-provider's notices (console.info) go to stderr.
console.info = console.error;
console.warn = console.error;
const modules = path.join(cache, 'oidc', 'node_modules');
const { default: Provider } = await import(path.join(modules, 'oidc-provider', 'lib', 'index.js'));
const jose = await import(path.join(modules, 'jose', 'dist', 'webapi', 'index.js'));

const SCOPES = 'notes:read notes:write admin';
// What each client's tokens may carry, whatever it asks for.
const GRANTED = { reader: 'notes:read', writer: SCOPES, legacy: 'notes:read notes:write' };
const TTL = 300;

async function newKey() {
    const { privateKey } = await jose.generateKeyPair('RS256', { extractable: true });
    const jwk = await jose.exportJWK(privateKey);
    jwk.kid = crypto.randomUUID();
    jwk.alg = 'RS256';
    jwk.use = 'sig';
    return jwk;
}

// Newest first: oidc-provider signs with the first key that fits the algorithm.
let keys = [await newKey()];
let provider;
let issuer;
let jwksFetches = 0;
// After POST /admin/hang-jwks: key-set requests are read and never answered (held here).
let hangJwks = false;
const held = [];

function build() {
    const p = new Provider(issuer, {
        clients: [
            {
                client_id: 'reader',
                client_secret: 'reader-secret',
                grant_types: ['client_credentials'],
                redirect_uris: [],
                response_types: [],
                scope: SCOPES,
            },
            {
                client_id: 'writer',
                client_secret: 'writer-secret',
                grant_types: ['client_credentials'],
                redirect_uris: [],
                response_types: [],
                scope: SCOPES,
            },
            {
                client_id: 'legacy',
                client_secret: 'legacy-secret',
                grant_types: ['client_credentials'],
                redirect_uris: [],
                response_types: [],
                scope: 'notes:read notes:write',
            },
            {
                client_id: 'mcp-server',
                client_secret: 'mcp-server-secret',
                grant_types: [],
                redirect_uris: [],
                response_types: [],
            },
        ],
        jwks: { keys },
        scopes: SCOPES.split(' '),
        features: {
            devInteractions: { enabled: false },
            clientCredentials: { enabled: true },
            introspection: {
                enabled: true,
                allowedPolicy: (ctx) => ctx.oidc.client.clientId === 'mcp-server',
            },
            revocation: { enabled: true },
            resourceIndicators: {
                enabled: true,
                defaultResource: () => resource,
                useGrantedResource: () => true,
                getResourceServerInfo: (_ctx, indicator, client) => {
                    if (indicator !== resource) throw new Error(`unknown resource ${indicator}`);
                    return {
                        scope: GRANTED[client.clientId] ?? '',
                        audience: resource,
                        accessTokenTTL: TTL,
                        accessTokenFormat: client.clientId === 'legacy' ? 'opaque' : 'jwt',
                        jwt: { sign: { alg: 'RS256' } },
                    };
                },
            },
        },
    });
    p.proxy = false;
    return p;
}

async function signWith(jwk, claims, header) {
    const key = await jose.importJWK(jwk, 'RS256');
    return new jose.SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: jwk.kid, typ: 'at+jwt', ...header }).sign(key);
}

const b64 = (obj) => Buffer.from(JSON.stringify(obj)).toString('base64url');

// RS256 over any header at all (jose refuses to sign a header it would itself refuse, such as
// a `crit` it does not understand): node's own RSA signature with the key `jwk`.
function signRaw(jwk, header, claims) {
    const input = `${b64({ alg: 'RS256', typ: 'at+jwt', ...header })}.${b64(claims)}`;
    const key = crypto.createPrivateKey({ key: jwk, format: 'jwk' });
    return `${input}.${crypto.sign('sha256', Buffer.from(input), key).toString('base64url')}`;
}

async function forge(kind) {
    const now = Math.floor(Date.now() / 1000);
    const claims = { iss: issuer, aud: resource, sub: 'forged', client_id: 'writer', scope: SCOPES, iat: now, exp: now + TTL, jti: crypto.randomUUID() };
    const current = keys[0];
    switch (kind) {
        case 'good':
            return signWith(current, claims);
        case 'expired':
            return signWith(current, { ...claims, iat: now - 3600, exp: now - 1800 });
        case 'not-yet-valid':
            return signWith(current, { ...claims, nbf: now + 1800 });
        case 'wrong-audience':
            return signWith(current, { ...claims, aud: 'http://127.0.0.1:1/other-resource' });
        case 'wrong-issuer':
            return signWith(current, { ...claims, iss: 'http://127.0.0.1:1/other-issuer' });
        case 'alg-none':
            return `${b64({ alg: 'none', typ: 'at+jwt' })}.${b64(claims)}.`;
        case 'hs256-public-key': {
            // The classic confusion attack: HMAC keyed with the published RSA public key.
            const pub = { kty: current.kty, n: current.n, e: current.e };
            const secret = crypto.createPublicKey({ key: pub, format: 'jwk' }).export({ type: 'spki', format: 'pem' });
            return new jose.SignJWT(claims)
                .setProtectedHeader({ alg: 'HS256', kid: current.kid, typ: 'at+jwt' })
                .sign(new Uint8Array(Buffer.from(secret)));
        }
        case 'unknown-kid':
            return signWith(await newKey(), claims);
        case 'tampered': {
            const [h, , s] = (await signWith(current, { ...claims, scope: 'notes:read' })).split('.');
            return `${h}.${b64(claims)}.${s}`;
        }
        case 'iat-future':
            // Issued an hour from now, otherwise valid (exp after iat).
            return signWith(current, { ...claims, iat: now + 3600, exp: now + 3600 + TTL });
        case 'iat-ahead-10s':
            return signWith(current, { ...claims, iat: now + 10 });
        case 'crit-unknown':
            return signRaw(current, { kid: current.kid, crit: ['urn:example:must-check'], 'urn:example:must-check': true }, claims);
        case 'crit-b64':
            // RFC 7797 unencoded payload: an extension this resource server does not implement.
            return signRaw(current, { kid: current.kid, b64: true, crit: ['b64'] }, claims);
        case 'crit-empty':
            return signRaw(current, { kid: current.kid, crit: [] }, claims);
        case 'crit-not-array':
            return signRaw(current, { kid: current.kid, crit: 'exp' }, claims);
        case 'crit-not-strings':
            return signRaw(current, { kid: current.kid, crit: [42] }, claims);
        case 'kid-number':
            return signRaw(current, { kid: 42 }, claims);
        case 'raw-good':
            // The control case of the raw signer: the same header jose would write.
            return signRaw(current, { kid: current.kid }, claims);
        default:
            return null;
    }
}

const server = http.createServer(async (req, res) => {
    try {
        const url = new URL(req.url, issuer);
        if (url.pathname === '/admin/rotate' && req.method === 'POST') {
            keys = [await newKey(), ...keys];
            provider = build();
            res.end(keys[0].kid);
        } else if (url.pathname === '/admin/retire' && req.method === 'POST') {
            keys = [keys[0]];
            provider = build();
            res.end(keys[0].kid);
        } else if (url.pathname === '/admin/hang-jwks' && req.method === 'POST') {
            hangJwks = true;
            res.end('hanging');
        } else if (url.pathname === '/admin/jwks-fetches') {
            res.end(String(jwksFetches));
        } else if (url.pathname === '/admin/forge') {
            const token = await forge(url.searchParams.get('case'));
            res.statusCode = token ? 200 : 404;
            res.end(token ?? 'unknown case');
        } else {
            if (url.pathname === '/jwks') {
                jwksFetches += 1;
                if (hangJwks) {
                    held.push(res);
                    return;
                }
            }
            provider.callback()(req, res);
        }
    } catch (err) {
        console.error(err);
        res.statusCode = 500;
        res.end(String(err));
    }
});

server.listen(port, '127.0.0.1', () => {
    issuer = `http://127.0.0.1:${server.address().port}`;
    provider = build();
    console.log(`issuer=${issuer}`);
});
process.on('SIGTERM', () => process.exit(0));
