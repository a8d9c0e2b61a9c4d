// Every exemption in the linters' configuration still names a part of openapi.yaml:
// an exemption whose operation or schema was renamed or removed fails here instead of
// lingering unnoticed. Run by scripts/lint-openapi.sh, from this directory.
'use strict';
const fs = require('fs');
const path = require('path');
const { parse } = require('@stoplight/yaml');

const here = __dirname;
const read = (file) => parse(fs.readFileSync(path.join(here, file), 'utf8'));
const doc = read('../../openapi.yaml');

function resolves(pointer) {
  let node = doc;
  for (const raw of pointer.replace(/^#\/?/, '').split('/').filter((s) => s !== '')) {
    const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (node === null || typeof node !== 'object' || !(key in node)) return false;
    node = node[key];
  }
  return true;
}

const pointers = [];
for (const override of read('spectral-owasp.yaml').overrides || []) {
  for (const file of override.files) {
    const hash = file.indexOf('#');
    if (hash >= 0) pointers.push(['spectral-owasp.yaml', file.slice(hash)]);
  }
}
const redoclyIgnore = fs.existsSync(path.join(here, '.redocly.lint-ignore.yaml'))
  ? read('.redocly.lint-ignore.yaml')
  : {};
for (const rules of Object.values(redoclyIgnore)) {
  for (const list of Object.values(rules)) {
    for (const pointer of list) pointers.push(['.redocly.lint-ignore.yaml', pointer]);
  }
}
const stale = pointers.filter(([, pointer]) => !resolves(pointer));
for (const [file, pointer] of stale) console.error(`${file}: ${pointer} names nothing in openapi.yaml`);
if (stale.length > 0) process.exit(1);
console.log(`${pointers.length} exemption pointers, each naming a part of openapi.yaml`);
