import fs from 'node:fs';
import path from 'node:path';

/**
 * The project's root (where package.json and .tools/ are), from src/ run as TypeScript or from its
 * compiled copy under dist/ (scripts/build.js, the image): the nearest folder upwards with a package.json.
 */
export const PROJECT_ROOT = ((): string => {
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) return path.resolve(__dirname, '..');
  }
})();
