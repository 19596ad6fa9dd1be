// The Jest transformer used inside the sandbox, written into the runner folder as transform.js
// (launch/runner-files.ts) beside a node_modules link to aca's, and mounted read-only there.
//
// It uses typescript's transpileModule: per-file, no type checking, no tsconfig
// lookup, no network. That turns both TypeScript and ES-module JavaScript into
// CommonJS, which is what Jest runs without experimental flags.
'use strict';
const crypto = require('crypto');
const path = require('path');
// Resolved next to this file: the runner folder holds node_modules beside it.
const ts = require(path.join(__dirname, 'node_modules', 'typescript'));

const compilerOptions = {
  module: ts.ModuleKind.CommonJS,
  target: ts.ScriptTarget.ES2022,
  esModuleInterop: true,
  allowJs: true,
  jsx: ts.JsxEmit.React,
  inlineSourceMap: true,
  inlineSources: true,
};

module.exports = {
  process(sourceText, sourcePath) {
    const out = ts.transpileModule(sourceText, {
      fileName: sourcePath,
      compilerOptions,
      reportDiagnostics: true,
    });
    // transpileModule only reports syntax errors; without this a broken file would run as mangled code.
    const errors = (out.diagnostics || []).filter((d) => d.category === ts.DiagnosticCategory.Error);
    if (errors.length > 0) {
      const text = ts.formatDiagnostics(errors, {
        getCanonicalFileName: (f) => f,
        getCurrentDirectory: () => process.cwd(),
        getNewLine: () => '\n',
      });
      const error = new SyntaxError(text.trim());
      // The stack would point into this transformer; the diagnostic already names file, line and column.
      error.stack = 'SyntaxError: ' + error.message;
      throw error;
    }
    return { code: out.outputText };
  },
  getCacheKey(sourceText, sourcePath) {
    return crypto
      .createHash('sha256')
      .update('aca-ts-1\0' + ts.version + '\0' + sourcePath + '\0' + sourceText)
      .digest('hex');
  },
};
