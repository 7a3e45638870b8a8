// Builds the console into dist/ (served by api/console/ at /app):
// - esbuild bundles src/main.jsx; every page is a dynamic import, so the first
//   page loads only the shell and its own chunk (the 100 KB budget of issue 36);
// - every file is named by its content hash, so the server can cache it
//   immutably and a new build is never half-cached;
// - index.html is written here with the hashed names and no inline script
//   (the Content-Security-Policy forbids it).
// `node build.mjs` from anywhere; `--watch` is not offered: builds take < 1 s.
import * as esbuild from 'esbuild';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(fileURLToPath(import.meta.url));
const dist = join(root, 'dist');
const assets = join(dist, 'assets');

await rm(dist, { recursive: true, force: true });
await mkdir(assets, { recursive: true });

// `import href from 'some/file.css?url'`: the file copied as a hashed asset
// and imported as its URL. A page links its own heavy stylesheet this way
// (swagger-ui's on the docs page): a plain CSS import from a lazy chunk would
// be merged into main.css, which every page loads.
const assetUrl = {
  name: 'asset-url',
  setup(b) {
    b.onResolve({ filter: /\?url$/ }, async (args) => {
      const r = await b.resolve(args.path.slice(0, -4), { kind: args.kind, resolveDir: args.resolveDir, importer: args.importer });
      return r.errors.length ? { errors: r.errors } : { path: r.path, namespace: 'asset-url' };
    });
    b.onLoad({ filter: /.*/, namespace: 'asset-url' }, async (args) => ({ contents: await readFile(args.path), loader: 'file' }));
  },
};

const result = await esbuild.build({
  absWorkingDir: root,
  entryPoints: { main: 'src/main.jsx' },
  bundle: true,
  splitting: true,
  format: 'esm',
  outdir: assets,
  entryNames: '[name]-[hash]',
  chunkNames: 'chunk-[hash]',
  assetNames: '[name]-[hash]',
  // An AudioWorklet module is loaded by URL (audioWorklet.addModule), so it
  // is copied as a hashed file and imported as its URL.
  loader: { '.worklet': 'file', '.svg': 'file', '.woff2': 'file' },
  publicPath: '/app/assets',
  minify: true,
  sourcemap: 'linked',
  metafile: true,
  jsx: 'automatic',
  jsxImportSource: 'preact',
  target: ['chrome110', 'firefox115', 'safari16'],
  define: { 'process.env.NODE_ENV': '"production"' },
  legalComments: 'none',
  plugins: [assetUrl],
  logLevel: 'warning',
});

// The entry's script and its CSS bundle, by name in the metafile.
let mainJs;
let mainCss;
for (const [file, out] of Object.entries(result.metafile.outputs)) {
  if (out.entryPoint === 'src/main.jsx' && file.endsWith('.js')) {
    mainJs = file;
    mainCss = out.cssBundle;
  }
}
if (!mainJs) throw new Error('esbuild produced no main script');
const url = (file) => `/app/assets/${relative(assets, join(root, file))}`;

const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<link rel="icon" href="data:,">
<title>scribe</title>
${mainCss ? `<link rel="stylesheet" href="${url(mainCss)}">\n` : ''}<script type="module" src="${url(mainJs)}"></script>
</head>
<body>
<div id="app"><p class="boot">Loading scribe…</p></div>
<noscript>The scribe console needs JavaScript. The API works without it: see /app/docs.</noscript>
</body>
</html>
`;
await writeFile(join(dist, 'index.html'), html);

const bytes = Object.values(result.metafile.outputs).reduce((n, o) => n + o.bytes, 0);
console.log(`console built: ${Object.keys(result.metafile.outputs).length} files, ${bytes} bytes in ${relative(process.cwd(), dist) || dist}`);
