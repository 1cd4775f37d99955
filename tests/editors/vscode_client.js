// vscode_client.js EXTENSION_DIR CMTC TMPDIR
//
// Runs the VS Code extension as packaged (the `extension/` folder of the
// .vsix: its extension.js and the vscode-languageclient it bundles) in node,
// with tests/editors/vscode_api.js standing in for the editor, against the
// real `cmtc lsp`.  It does what VS Code does: activates the extension with
// the settings cmt.serverPath and cmt.includeDirs, opens documents, waits for
// the diagnostics the client publishes, calls the providers the client
// registered (hover, definition, symbols, quick fix, completion,
// formatting) and applies their edits as VS Code applies them, restarts the
// server with the extension's command, and deactivates it.
//
// Prints one PASS: or FAIL: line per check.
'use strict';
const fs = require('fs');
const path = require('path');
const Module = require('module');

const [extDir, cmtc, tmp] = process.argv.slice(2);
const apiPath = path.join(__dirname, 'vscode_api.js');
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  return request === 'vscode' ? apiPath : resolve.call(this, request, ...rest);
};
const vscode = require('vscode');
const t = vscode.__test;

let failures = 0;
function check(ok, name, why) {
  if (ok) console.log('PASS: ' + name);
  else { failures++; console.log('FAIL: ' + name + ': ' + why); }
}

function within(ms, promise, what) {
  let timer;
  const limit = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(what + ': no answer within ' + ms / 1000 + ' s')), ms);
  });
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer));
}

// Resolves with the document's diagnostics once pred(diagnostics) holds.
function diagnosticsWhere(doc, pred, what) {
  return within(15000, new Promise((res) => {
    const now = vscode.languages.getDiagnostics(doc.uri);
    if (pred(now)) { res(now); return; }
    const sub = t.events.diagnostics.event((uri) => {
      const d = vscode.languages.getDiagnostics(doc.uri);
      if (uri.toString() === doc.uri.toString() && pred(d)) { sub.dispose(); res(d); }
    });
  }), what);
}

function provider(kind) {
  const list = t.providers[kind] || [];
  const doc = { uri: vscode.Uri.file('/x.cmt'), languageId: 'cmt' };
  const p = list.find((e) => vscode.languages.match(e.selector, doc) > 0);
  if (!p) throw new Error('the client registered no ' + kind + ' provider for cmt');
  return p.provider;
}

const token = () => new vscode.CancellationTokenSource().token;
const codeOf = (d) => (d.code && typeof d.code === 'object' ? d.code.value : d.code);
const describe = (ds) => JSON.stringify(ds.map((d) => [d.range.start.line + 1, codeOf(d), d.message.split('\n')[0]]));

async function main() {
  const pkg = JSON.parse(fs.readFileSync(path.join(extDir, 'package.json'), 'utf8'));
  const lang = pkg.contributes.languages.find((l) => l.id === 'cmt');
  const langConfig = JSON.parse(fs.readFileSync(path.join(extDir, lang.configuration), 'utf8'));

  // A module only the -I folder of the settings provides.
  const inc = path.join(tmp, 'inc');
  fs.mkdirSync(inc, { recursive: true });
  fs.writeFileSync(path.join(inc, 'mylib.cmt'), 'const LIBC = 1;\n');
  const badPath = path.join(tmp, 'bad.cmt');
  const badText = 'use mylib;\nconst A = 4;\nconst B = A * 2;\nconst C = B + missing_name;\nconst D = AA + 1;\n';
  fs.writeFileSync(badPath, badText);

  t.settings['cmt.serverPath'] = cmtc;
  t.settings['cmt.includeDirs'] = [inc];
  const ext = require(path.join(extDir, pkg.main));
  const context = { subscriptions: [], extensionPath: extDir, extensionUri: vscode.Uri.file(extDir) };
  await within(15000, Promise.resolve(ext.activate(context)), 'activate');
  check(pkg.activationEvents.includes('onLanguage:cmt') && t.commands.has('cmt.restartServer'),
    'vscode_activate', 'activation event or restart command missing');

  // Diagnostics: the two unknown names, and nothing at `use mylib` (which
  // resolves only through cmt.includeDirs, passed to the server as -I).
  const bad = t.openDocument(badPath, 'cmt', badText, langConfig.wordPattern);
  let diags = await diagnosticsWhere(bad, (d) => d.length > 0, 'diagnostics');
  const want = [[4, 'E0201', 'unknown name `missing_name` in a constant'],
    [5, 'E0201', 'unknown name `AA` in a constant']];
  check(describe(diags) === JSON.stringify(want) &&
    diags.every((d) => d.source === 'cmtc' && d.severity === vscode.DiagnosticSeverity.Error),
  'vscode_diagnostics', 'got ' + describe(diags) + ', want ' + JSON.stringify(want));

  // Hover and definition of `A` in `const B = A * 2;`.
  const at = new vscode.Position(2, 10);
  const hover = await within(10000, Promise.resolve(provider('Hover').provideHover(bad, at, token())), 'hover');
  const hoverText = hover ? hover.contents.map((c) => (typeof c === 'string' ? c : c.value)).join('\n') : '';
  check(hoverText.includes('const A = 4'), 'vscode_hover', 'got ' + JSON.stringify(hoverText.slice(0, 200)));
  let def = await within(10000, Promise.resolve(provider('Definition').provideDefinition(bad, at, token())), 'definition');
  def = Array.isArray(def) ? def[0] : def;
  const defRange = def && (def.targetSelectionRange || def.range);
  const defUri = def && (def.targetUri || def.uri);
  check(defRange && defUri.fsPath === badPath && defRange.start.line === 1 && defRange.start.character === 6,
    'vscode_definition', 'got ' + JSON.stringify(def));

  const symbols = await within(10000, Promise.resolve(provider('DocumentSymbol').provideDocumentSymbols(bad, token())), 'symbols');
  const names = (symbols || []).map((s) => s.name);
  check(['A', 'B', 'C', 'D'].every((n) => names.includes(n)), 'vscode_symbols', 'got ' + JSON.stringify(names));

  // Quick fix: `AA` -> `A`, applied through workspace.applyEdit; the
  // diagnostics that follow the change have only `missing_name` left.
  const aa = diags.find((d) => d.message.includes('`AA`'));
  const actions = await within(10000, Promise.resolve(provider('CodeActions').provideCodeActions(bad, aa.range,
    { diagnostics: [aa], triggerKind: 1, only: undefined }, token())), 'codeAction');
  const fix = (actions || []).find((a) => a.edit && /`A`/.test(a.title));
  if (fix) await vscode.workspace.applyEdit(fix.edit);
  const line5 = bad.lineAt(4).text;
  diags = fix ? await diagnosticsWhere(bad, (d) => d.length === 1, 'diagnostics after the fix').catch(() => diags) : diags;
  check(fix && line5 === 'const D = A + 1;' && diags.length === 1,
    'vscode_quick_fix', 'actions ' + JSON.stringify((actions || []).map((a) => a.title)) +
    ', line 5 ' + JSON.stringify(line5) + ', diagnostics ' + describe(diags));

  // Formatting through the server.
  t.changeDocument(bad, [vscode.TextEdit.replace(bad.lineAt(2).range, 'const   B=A*2;')]);
  const edits = await within(10000, Promise.resolve(provider('DocumentFormattingEdit')
    .provideDocumentFormattingEdits(bad, { tabSize: 2, insertSpaces: true }, token())), 'formatting');
  if (edits && edits.length) t.changeDocument(bad, edits);
  check(bad.lineAt(2).text === 'const B = A * 2;', 'vscode_formatting',
    'line 3 is ' + JSON.stringify(bad.lineAt(2).text) + ' after ' + JSON.stringify(edits));

  // Completion after `use std.`, accepted as VS Code accepts an item: its
  // range (from the server's textEdit) is replaced; without one, the word
  // before the cursor by the language's wordPattern.
  const usePath = path.join(tmp, 'use.cmt');
  fs.writeFileSync(usePath, 'use std.\n');
  const use = t.openDocument(usePath, 'cmt', 'use std.\n', langConfig.wordPattern);
  const pos = new vscode.Position(0, 8);
  const got = await within(10000, Promise.resolve(provider('CompletionItem').provideCompletionItems(use, pos, token(),
    { triggerKind: vscode.CompletionTriggerKind.TriggerCharacter, triggerCharacter: '.' })), 'completion');
  const items = Array.isArray(got) ? got : (got ? got.items : []);
  const textOf = (it) => (it.insertText instanceof vscode.SnippetString ? it.insertText.value
    : it.insertText ?? (typeof it.label === 'string' ? it.label : it.label.label));
  const gemm = items.find((it) => /(^|\.)ops\.gemm$/.test(textOf(it)));
  let line = '(no item for std.ops.gemm among ' + items.length + ')';
  if (gemm) {
    let range = gemm.range instanceof vscode.Range ? gemm.range : gemm.range && gemm.range.inserting;
    if (!range) {
      const word = use.getWordRangeAtPosition(pos);
      range = new vscode.Range(word ? word.start : pos, pos);
    }
    t.changeDocument(use, [vscode.TextEdit.replace(range, textOf(gemm))]);
    line = use.lineAt(0).text;
  }
  check(line === 'use std.ops.gemm', 'vscode_use_completion',
    'accepting std.ops.gemm after `use std.` gives ' + JSON.stringify(line));

  // The extension's restart command: a new server publishes the open
  // documents' diagnostics again.
  const before = t.output.length;
  const again = new Promise((res) => {
    const sub = t.events.diagnostics.event((uri) => {
      if (uri.toString() === bad.uri.toString() && vscode.languages.getDiagnostics(bad.uri).length === 1) {
        sub.dispose(); res(true);
      }
    });
  });
  await within(15000, vscode.commands.executeCommand('cmt.restartServer'), 'restart');
  const republished = await within(15000, again, 'diagnostics after restart').catch(() => false);
  check(republished, 'vscode_restart', 'no diagnostics after cmt.restartServer; output: ' +
    JSON.stringify(t.output.slice(before, before + 5)));

  await within(10000, Promise.resolve(ext.deactivate()), 'deactivate');
  check(t.shown.length === 0, 'vscode_no_error_shown', 'the client showed ' + JSON.stringify(t.shown));
}

main().then(() => process.exit(failures ? 1 : 0), (e) => {
  console.log('FAIL: vscode_client: ' + (e && e.stack ? e.stack.split('\n').slice(0, 3).join(' | ') : e));
  process.exit(1);
});
