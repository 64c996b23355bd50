import path from 'node:path';
import express, { Router } from 'express';
// The package's index also loads its 2 MB browser bundles as modules; only their folder is wanted here.
import getAbsoluteFSPath from 'swagger-ui-dist/absolute-path';
import { buildOpenApiDocument } from '../openapi';

/** GET /api/openapi.json and the interactive reference at /api/docs (Swagger UI served from the package, no CDN). */

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Gateway API reference</title>
<link rel="stylesheet" href="/api/docs/assets/swagger-ui.css">
<link rel="icon" type="image/png" href="/api/docs/assets/favicon-32x32.png">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/api/docs/assets/swagger-ui-bundle.js"></script>
<script src="/api/docs/assets/swagger-ui-standalone-preset.js"></script>
<script src="/api/docs/init.js"></script>
</body>
</html>
`;

const INIT = `window.onload = function () {
  window.ui = SwaggerUIBundle({
    url: '/api/openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    layout: 'StandaloneLayout',
  });
};
`;

const ASSETS = new Set(['swagger-ui.css', 'swagger-ui-bundle.js', 'swagger-ui-standalone-preset.js', 'favicon-16x16.png', 'favicon-32x32.png']);

export function openapiRoutes(r: Router = Router()): Router {
  let doc: string | undefined;
  r.get('/api/openapi.json', (_req, res) => {
    doc ??= JSON.stringify(buildOpenApiDocument());
    res.type('application/json').send(doc);
  });
  r.get(['/api/docs', '/api/docs/'], (_req, res) => {
    res.type('text/html; charset=utf-8').send(PAGE);
  });
  r.get('/api/docs/init.js', (_req, res) => {
    res.type('application/javascript').send(INIT);
  });
  const files = express.static(path.resolve(getAbsoluteFSPath()), { index: false, fallthrough: true, maxAge: '1h' });
  r.use('/api/docs/assets', (req, res, next) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return next();
    if (!ASSETS.has(req.path.replace(/^\//, ''))) return next();
    files(req, res, next);
  });
  return r;
}
