// vscode_api.js — the part of the VS Code extension API (the `vscode`
// module VS Code gives an extension) that extension.js and
// vscode-languageclient 9 use to run `cmtc lsp` for .cmt documents, so that
// the shipped extension and client library can be run in plain node against
// the real server (tests/editors/vscode_client.js).  VS Code itself cannot
// be installed here: Debian does not package it.
//
// The classes carry what the client's converters read and write.  Any
// other name is refused loudly (see the Proxy at the end): if a new client
// version reaches for more of the API, the test says what is missing
// instead of passing on an undefined.
'use strict';

class Disposable {
  constructor(fn) { this._fn = fn; }
  static from(...items) {
    return new Disposable(() => items.forEach((d) => d && d.dispose && d.dispose()));
  }
  dispose() { const fn = this._fn; this._fn = undefined; if (fn) fn(); }
}

class EventEmitter {
  constructor() {
    this._listeners = [];
    this.event = (fn, thisArg, disposables) => {
      const entry = { fn, thisArg };
      this._listeners.push(entry);
      const d = new Disposable(() => { this._listeners = this._listeners.filter((e) => e !== entry); });
      if (Array.isArray(disposables)) disposables.push(d);
      return d;
    };
  }
  fire(value) { for (const e of this._listeners.slice()) e.fn.call(e.thisArg, value); }
  dispose() { this._listeners = []; }
}

class CancellationError extends Error {
  constructor() { super('Canceled'); this.name = 'Canceled'; }
}

class CancellationTokenSource {
  constructor() {
    this._emitter = new EventEmitter();
    this.token = { isCancellationRequested: false, onCancellationRequested: this._emitter.event };
  }
  cancel() {
    if (!this.token.isCancellationRequested) {
      this.token.isCancellationRequested = true;
      this._emitter.fire(undefined);
    }
  }
  dispose() { this._emitter.dispose(); }
}

class Uri {
  constructor(scheme, authority, path, query, fragment) {
    this.scheme = scheme; this.authority = authority || ''; this.path = path || '';
    this.query = query || ''; this.fragment = fragment || '';
  }
  static parse(text) {
    const m = /^([A-Za-z][A-Za-z0-9+.-]*):(?:\/\/([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?$/.exec(text);
    if (!m) throw new Error('Uri.parse: not a URI: ' + text);
    return new Uri(m[1], m[2], decodeURIComponent(m[3]), m[4], m[5]);
  }
  static file(path) { return new Uri('file', '', path, '', ''); }
  get fsPath() { return this.path; }
  with(change) {
    return new Uri(change.scheme ?? this.scheme, change.authority ?? this.authority,
      change.path ?? this.path, change.query ?? this.query, change.fragment ?? this.fragment);
  }
  toString() {
    const path = this.path.split('/').map(encodeURIComponent).join('/');
    return this.scheme + '://' + this.authority + path +
      (this.query ? '?' + this.query : '') + (this.fragment ? '#' + this.fragment : '');
  }
  toJSON() { return { scheme: this.scheme, authority: this.authority, path: this.path, query: this.query, fragment: this.fragment }; }
}

class Position {
  constructor(line, character) {
    if (line < 0 || character < 0) throw new Error('Position: negative');
    this.line = line; this.character = character;
  }
  compareTo(o) { return this.line - o.line || this.character - o.character; }
  isBefore(o) { return this.compareTo(o) < 0; }
  isBeforeOrEqual(o) { return this.compareTo(o) <= 0; }
  isAfter(o) { return this.compareTo(o) > 0; }
  isAfterOrEqual(o) { return this.compareTo(o) >= 0; }
  isEqual(o) { return this.compareTo(o) === 0; }
  translate(dl = 0, dc = 0) {
    if (typeof dl === 'object') { dc = dl.characterDelta || 0; dl = dl.lineDelta || 0; }
    return new Position(this.line + dl, this.character + dc);
  }
  with(line = this.line, character = this.character) {
    if (typeof line === 'object') { character = line.character ?? this.character; line = line.line ?? this.line; }
    return new Position(line, character);
  }
}

class Range {
  constructor(a, b, c, d) {
    let start = typeof a === 'number' ? new Position(a, b) : a;
    let end = typeof a === 'number' ? new Position(c, d) : b;
    if (end.isBefore(start)) [start, end] = [end, start];
    this.start = start; this.end = end;
  }
  get isEmpty() { return this.start.isEqual(this.end); }
  get isSingleLine() { return this.start.line === this.end.line; }
  contains(p) {
    if (p instanceof Range) return this.contains(p.start) && this.contains(p.end);
    return this.start.isBeforeOrEqual(p) && p.isBeforeOrEqual(this.end);
  }
  isEqual(o) { return this.start.isEqual(o.start) && this.end.isEqual(o.end); }
  with(start = this.start, end = this.end) {
    if (start && !(start instanceof Position)) { end = start.end ?? this.end; start = start.start ?? this.start; }
    return new Range(start, end);
  }
}

class Selection extends Range {
  constructor(anchor, active) { super(anchor, active); this.anchor = anchor; this.active = active; }
}

class Location {
  constructor(uri, rangeOrPosition) {
    this.uri = uri;
    this.range = rangeOrPosition instanceof Position ? new Range(rangeOrPosition, rangeOrPosition) : rangeOrPosition;
  }
}

const DiagnosticSeverity = { Error: 0, Warning: 1, Information: 2, Hint: 3 };
const DiagnosticTag = { Unnecessary: 1, Deprecated: 2 };

class Diagnostic {
  constructor(range, message, severity = DiagnosticSeverity.Error) {
    this.range = range; this.message = message; this.severity = severity;
  }
}

class DiagnosticRelatedInformation {
  constructor(location, message) { this.location = location; this.message = message; }
}

class MarkdownString {
  constructor(value = '', supportThemeIcons = false) {
    this.value = value; this.supportThemeIcons = supportThemeIcons;
  }
  appendText(text) { this.value += text.replace(/[\\`*_{}[\]()#+\-.!]/g, '\\$&'); return this; }
  appendMarkdown(text) { this.value += text; return this; }
  appendCodeblock(code, language = '') { this.value += '\n```' + language + '\n' + code + '\n```\n'; return this; }
}

class Hover {
  constructor(contents, range) { this.contents = Array.isArray(contents) ? contents : [contents]; this.range = range; }
}

class TextEdit {
  constructor(range, newText) { this.range = range; this.newText = newText; }
  static replace(range, newText) { return new TextEdit(range, newText); }
  static insert(position, newText) { return new TextEdit(new Range(position, position), newText); }
  static delete(range) { return new TextEdit(range, ''); }
}

class SnippetString {
  constructor(value = '') { this.value = value; }
}

class WorkspaceEdit {
  constructor() { this._edits = new Map(); }
  _list(uri) {
    const key = uri.toString();
    if (!this._edits.has(key)) this._edits.set(key, [uri, []]);
    return this._edits.get(key)[1];
  }
  replace(uri, range, newText) { this._list(uri).push(new TextEdit(range, newText)); }
  insert(uri, position, newText) { this._list(uri).push(TextEdit.insert(position, newText)); }
  delete(uri, range) { this._list(uri).push(TextEdit.delete(range)); }
  set(uri, edits) { const l = this._list(uri); l.length = 0; l.push(...edits); }
  has(uri) { return this._edits.has(uri.toString()); }
  get(uri) { return (this._edits.get(uri.toString()) || [uri, []])[1]; }
  entries() { return [...this._edits.values()]; }
  get size() { return this._edits.size; }
  createFile() { throw new Error('WorkspaceEdit.createFile: not expected from cmtc'); }
  renameFile() { throw new Error('WorkspaceEdit.renameFile: not expected from cmtc'); }
  deleteFile() { throw new Error('WorkspaceEdit.deleteFile: not expected from cmtc'); }
}

// The numbering of the VS Code API (not of LSP: the client converts).
const CompletionItemKind = Object.fromEntries(['Text', 'Method', 'Function', 'Constructor', 'Field',
  'Variable', 'Class', 'Interface', 'Module', 'Property', 'Unit', 'Value', 'Enum', 'Keyword',
  'Snippet', 'Color', 'File', 'Reference', 'Folder', 'EnumMember', 'Constant', 'Struct', 'Event',
  'Operator', 'TypeParameter', 'User', 'Issue'].map((n, i) => [n, i]));
const SymbolKind = Object.fromEntries(['File', 'Module', 'Namespace', 'Package', 'Class', 'Method',
  'Property', 'Field', 'Constructor', 'Enum', 'Interface', 'Function', 'Variable', 'Constant',
  'String', 'Number', 'Boolean', 'Array', 'Object', 'Key', 'Null', 'EnumMember', 'Struct', 'Event',
  'Operator', 'TypeParameter'].map((n, i) => [n, i]));

class CompletionItem {
  constructor(label, kind) { this.label = label; this.kind = kind; }
}

class CompletionList {
  constructor(items = [], isIncomplete = false) { this.items = items; this.isIncomplete = isIncomplete; }
}

class DocumentSymbol {
  constructor(name, detail, kind, range, selectionRange) {
    this.name = name; this.detail = detail; this.kind = kind;
    this.range = range; this.selectionRange = selectionRange; this.children = [];
  }
}

class SymbolInformation {
  constructor(name, kind, containerOrRange, locationOrUri, containerName) {
    this.name = name; this.kind = kind;
    if (containerOrRange instanceof Range) {
      this.location = new Location(locationOrUri, containerOrRange);
      this.containerName = containerName;
    } else {
      this.containerName = containerOrRange; this.location = locationOrUri;
    }
  }
}

class CodeActionKind {
  constructor(value) { this.value = value; }
  append(part) { return new CodeActionKind(this.value ? this.value + '.' + part : part); }
  contains(other) { return this.value === other.value || other.value.startsWith(this.value + '.'); }
  intersects(other) { return this.contains(other) || other.contains(this); }
}
CodeActionKind.Empty = new CodeActionKind('');
CodeActionKind.QuickFix = new CodeActionKind('quickfix');
CodeActionKind.Refactor = new CodeActionKind('refactor');
CodeActionKind.RefactorExtract = new CodeActionKind('refactor.extract');
CodeActionKind.RefactorInline = new CodeActionKind('refactor.inline');
CodeActionKind.RefactorRewrite = new CodeActionKind('refactor.rewrite');
CodeActionKind.Source = new CodeActionKind('source');
CodeActionKind.SourceOrganizeImports = new CodeActionKind('source.organizeImports');
CodeActionKind.SourceFixAll = new CodeActionKind('source.fixAll');

class CodeAction {
  constructor(title, kind) { this.title = title; this.kind = kind; }
}

class CodeLens {
  constructor(range, command) { this.range = range; this.command = command; }
  get isResolved() { return !!this.command; }
}

class DocumentLink {
  constructor(range, target) { this.range = range; this.target = target; }
}

class InlayHint {
  constructor(position, label, kind) { this.position = position; this.label = label; this.kind = kind; }
}

class InlayHintLabelPart {
  constructor(value) { this.value = value; }
}

class CallHierarchyItem {
  constructor(kind, name, detail, uri, range, selectionRange) {
    Object.assign(this, { kind, name, detail, uri, range, selectionRange });
  }
}

class TypeHierarchyItem extends CallHierarchyItem {}

class FoldingRange {
  constructor(start, end, kind) { this.start = start; this.end = end; this.kind = kind; }
}

class RelativePattern {
  constructor(base, pattern) { this.baseUri = typeof base === 'string' ? Uri.file(base) : (base.uri || base); this.base = this.baseUri.fsPath; this.pattern = pattern; }
}

class TabInputText { constructor(uri) { this.uri = uri; } }
class TabInputTextDiff { constructor(original, modified) { this.original = original; this.modified = modified; } }
class TabInputCustom { constructor(uri, viewType) { this.uri = uri; this.viewType = viewType; } }
class TabInputNotebook { constructor(uri, notebookType) { this.uri = uri; this.notebookType = notebookType; } }

// ---------------------------------------------------------------------------
// Documents, as VS Code's TextDocument presents them.

const DEFAULT_WORD = /(-?\d*\.\d\w*)|([^`~!@#$%^&*()\-=+[{\]}\\|;:'",.<>/?\s]+)/g;

class TextDocument {
  constructor(uri, languageId, text, wordPattern) {
    this.uri = uri; this.fileName = uri.fsPath; this.languageId = languageId;
    this.version = 1; this.isClosed = false; this.isDirty = false; this.isUntitled = uri.scheme === 'untitled';
    this.eol = 1; this._text = text;
    this._word = wordPattern ? new RegExp(wordPattern, 'g') : DEFAULT_WORD;
  }
  _lines() { return this._text.split('\n'); }
  get lineCount() { return this._lines().length; }
  getText(range) {
    if (!range) return this._text;
    return this._text.slice(this.offsetAt(range.start), this.offsetAt(range.end));
  }
  lineAt(lineOrPosition) {
    const n = typeof lineOrPosition === 'number' ? lineOrPosition : lineOrPosition.line;
    const text = this._lines()[n];
    if (text === undefined) throw new Error('lineAt: no line ' + n);
    const first = text.search(/\S/);
    return {
      lineNumber: n, text, range: new Range(n, 0, n, text.length),
      rangeIncludingLineBreak: new Range(n, 0, n + 1, 0),
      firstNonWhitespaceCharacterIndex: first < 0 ? text.length : first,
      isEmptyOrWhitespace: first < 0,
    };
  }
  offsetAt(p) {
    const lines = this._lines();
    let off = 0;
    for (let i = 0; i < p.line && i < lines.length; i++) off += lines[i].length + 1;
    return off + Math.min(p.character, (lines[p.line] || '').length);
  }
  positionAt(offset) {
    const before = this._text.slice(0, Math.max(0, Math.min(offset, this._text.length))).split('\n');
    return new Position(before.length - 1, before[before.length - 1].length);
  }
  validatePosition(p) { return this.positionAt(this.offsetAt(p)); }
  validateRange(r) { return new Range(this.validatePosition(r.start), this.validatePosition(r.end)); }
  // VS Code's rule: the word (by the language's wordPattern) that contains
  // the position or ends at it.
  getWordRangeAtPosition(p, regex) {
    const text = this.lineAt(p.line).text;
    const rx = new RegExp((regex || this._word).source, 'g');
    let m;
    while ((m = rx.exec(text)) !== null) {
      if (m[0].length === 0) { rx.lastIndex++; continue; }
      if (m.index <= p.character && p.character <= m.index + m[0].length) {
        return new Range(p.line, m.index, p.line, m.index + m[0].length);
      }
    }
    return undefined;
  }
  save() { return Promise.resolve(true); }
  // Applies edits as VS Code does (all against the text before any of them)
  // and returns the content changes of the change event.
  _apply(edits) {
    const spans = edits.map((e) => ({ start: this.offsetAt(e.range.start), end: this.offsetAt(e.range.end), e }))
      .sort((a, b) => b.start - a.start);
    const changes = [];
    for (const s of spans) {
      changes.push({ range: s.e.range, rangeOffset: s.start, rangeLength: s.end - s.start, text: s.e.newText });
      this._text = this._text.slice(0, s.start) + s.e.newText + this._text.slice(s.end);
    }
    this.version += 1;
    return changes;
  }
}

// ---------------------------------------------------------------------------
// The namespaces.

const settings = {};           // 'cmt.serverPath' -> value
const providers = {};          // 'hover' -> [{ selector, provider, extra }]
const collections = [];
const shown = [];              // messages shown to the user
const output = [];             // what the client wrote to its output channel
const commandTable = new Map();
const ev = {
  open: new EventEmitter(), close: new EventEmitter(), change: new EventEmitter(),
  willSave: new EventEmitter(), save: new EventEmitter(), config: new EventEmitter(),
  folders: new EventEmitter(), editor: new EventEmitter(), editors: new EventEmitter(),
  tabs: new EventEmitter(), tabGroups: new EventEmitter(), diagnostics: new EventEmitter(),
};

function configuration(section) {
  const prefix = section ? section + '.' : '';
  return {
    get(key, dflt) { const v = settings[prefix + key]; return v === undefined ? dflt : v; },
    has(key) { return settings[prefix + key] !== undefined; },
    inspect(key) { return { key: prefix + key, globalValue: settings[prefix + key] }; },
    update(key, value) { settings[prefix + key] = value; return Promise.resolve(); },
  };
}

const workspace = {
  textDocuments: [],
  workspaceFolders: undefined,
  name: undefined,
  getConfiguration: configuration,
  onDidOpenTextDocument: ev.open.event,
  onDidCloseTextDocument: ev.close.event,
  onDidChangeTextDocument: ev.change.event,
  onWillSaveTextDocument: ev.willSave.event,
  onDidSaveTextDocument: ev.save.event,
  onDidChangeConfiguration: ev.config.event,
  onDidChangeWorkspaceFolders: ev.folders.event,
  createFileSystemWatcher() {
    const e = () => new EventEmitter().event;
    return { onDidCreate: e(), onDidChange: e(), onDidDelete: e(), dispose() {} };
  },
  applyEdit(edit) {
    for (const [uri, edits] of edit.entries()) {
      const doc = workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
      if (!doc) return Promise.resolve(false);
      changeDocument(doc, edits);
    }
    return Promise.resolve(true);
  },
};

function outputChannel(name) {
  const line = (kind) => (text) => output.push(kind + text);
  return {
    name, append: line(''), appendLine: line(''), replace: line(''), clear() {}, show() {}, hide() {},
    dispose() {}, trace: line('trace: '), debug: line('debug: '), info: line('info: '),
    warn: line('warn: '), error: line('error: '), logLevel: 0, onDidChangeLogLevel: new EventEmitter().event,
  };
}

function showMessage(kind) {
  return (message) => { shown.push(kind + ': ' + message); return Promise.resolve(undefined); };
}

const window = {
  activeTextEditor: undefined,
  visibleTextEditors: [],
  onDidChangeActiveTextEditor: ev.editor.event,
  onDidChangeVisibleTextEditors: ev.editors.event,
  tabGroups: { all: [], activeTabGroup: undefined, onDidChangeTabs: ev.tabs.event, onDidChangeTabGroups: ev.tabGroups.event },
  createOutputChannel: outputChannel,
  showInformationMessage: showMessage('info'),
  showWarningMessage: showMessage('warning'),
  showErrorMessage: showMessage('error'),
  showTextDocument: (doc) => Promise.resolve({ document: doc }),
  withProgress: (options, task) => task({ report() {} }, new CancellationTokenSource().token),
};

function matchFilter(filter, doc) {
  if (typeof filter === 'string') return filter === '*' || filter === doc.languageId ? 10 : 0;
  if (filter.language && filter.language !== '*' && filter.language !== doc.languageId) return 0;
  if (filter.scheme && filter.scheme !== '*' && filter.scheme !== doc.uri.scheme) return 0;
  if (filter.pattern) throw new Error('languages.match: glob patterns are not implemented here');
  return 10;
}

function register(kind) {
  return (selector, provider, ...extra) => {
    (providers[kind] = providers[kind] || []).push({ selector, provider, extra });
    return new Disposable(() => { providers[kind] = providers[kind].filter((p) => p.provider !== provider); });
  };
}

const languages = {
  match(selector, doc) {
    const list = Array.isArray(selector) ? selector : [selector];
    return Math.max(0, ...list.map((f) => matchFilter(f, doc)));
  },
  createDiagnosticCollection(name) {
    const map = new Map();
    const c = {
      name,
      set(uri, diags) {
        if (Array.isArray(uri)) { for (const [u, d] of uri) c.set(u, d); return; }
        map.set(uri.toString(), diags ? diags.slice() : []);
        ev.diagnostics.fire(uri);
      },
      delete(uri) { map.delete(uri.toString()); ev.diagnostics.fire(uri); },
      clear() { map.clear(); },
      get(uri) { return map.get(uri.toString()); },
      has(uri) { return map.has(uri.toString()); },
      forEach(fn) { for (const [k, v] of map) fn(Uri.parse(k), v, c); },
      dispose() { map.clear(); },
    };
    collections.push(c);
    return c;
  },
  getDiagnostics(uri) {
    return collections.flatMap((c) => c.get(uri) || []);
  },
};
for (const kind of ['Hover', 'Definition', 'Declaration', 'TypeDefinition', 'Implementation',
  'Reference', 'DocumentSymbol', 'WorkspaceSymbol', 'CompletionItem', 'CodeActions', 'CodeLens',
  'DocumentFormattingEdit', 'DocumentRangeFormattingEdit', 'OnTypeFormattingEdit', 'Rename',
  'DocumentLink', 'Color', 'FoldingRange', 'SelectionRange', 'CallHierarchy', 'TypeHierarchy',
  'SignatureHelp', 'DocumentHighlight', 'InlayHints', 'InlineValues', 'InlineCompletionItem',
  'LinkedEditingRange', 'DocumentSemanticTokens', 'DocumentRangeSemanticTokens',
  'EvaluatableExpression']) {
  languages['register' + kind + 'Provider'] = register(kind);
}

const commands = {
  registerCommand(id, fn) {
    if (commandTable.has(id)) throw new Error('command already registered: ' + id);
    commandTable.set(id, fn);
    return new Disposable(() => commandTable.delete(id));
  },
  executeCommand(id, ...args) {
    const fn = commandTable.get(id);
    return fn ? Promise.resolve(fn(...args)) : Promise.reject(new Error('no command ' + id));
  },
};

const env = {
  appName: 'Visual Studio Code', appRoot: '', language: 'en', machineId: 'cmtc-test',
  sessionId: 'cmtc-test', uriScheme: 'vscode', openExternal: () => Promise.resolve(false),
};

// Opening and changing documents as the editor does.
function openDocument(path, languageId, text, wordPattern) {
  const doc = new TextDocument(Uri.file(path), languageId, text, wordPattern);
  workspace.textDocuments.push(doc);
  ev.open.fire(doc);
  return doc;
}

function changeDocument(doc, edits) {
  const contentChanges = doc._apply(edits);
  ev.change.fire({ document: doc, contentChanges, reason: undefined });
}

const api = {
  version: '1.82.0',
  Disposable, EventEmitter, CancellationError, CancellationTokenSource, Uri, Position, Range,
  Selection, Location, Diagnostic, DiagnosticSeverity, DiagnosticTag, DiagnosticRelatedInformation,
  MarkdownString, Hover, TextEdit, SnippetString, WorkspaceEdit, CompletionItem, CompletionItemKind,
  CompletionItemTag: { Deprecated: 1 }, CompletionList,
  CompletionTriggerKind: { Invoke: 0, TriggerCharacter: 1, TriggerForIncompleteCompletions: 2 },
  DocumentSymbol, SymbolInformation, SymbolKind, SymbolTag: { Deprecated: 1 }, CodeAction,
  CodeActionKind, CodeActionTriggerKind: { Invoke: 1, Automatic: 2 }, CodeLens, DocumentLink,
  InlayHint, InlayHintLabelPart, InlayHintKind: { Type: 1, Parameter: 2 }, CallHierarchyItem,
  TypeHierarchyItem, FoldingRange, FoldingRangeKind: { Comment: 1, Imports: 2, Region: 3 },
  RelativePattern, TabInputText, TabInputTextDiff, TabInputCustom, TabInputNotebook,
  TextDocumentSaveReason: { Manual: 1, AfterDelay: 2, FocusOut: 3 },
  ProgressLocation: { SourceControl: 1, Window: 10, Notification: 15 },
  EndOfLine: { LF: 1, CRLF: 2 },
  workspace, window, languages, commands, env,
};

// The test's handle on the editor side (not part of the VS Code API).
const test = {
  settings, providers, shown, output, events: ev, commands: commandTable,
  openDocument, changeDocument,
};

const known = new Set(Object.keys(api));
module.exports = new Proxy(api, {
  get(target, name) {
    if (name === '__test') return test;
    if (typeof name === 'symbol' || name.startsWith('__') || name === 'then' || name === 'default') return target[name];
    if (!known.has(name)) throw new Error('the test\'s VS Code API has no `vscode.' + name + '`');
    return target[name];
  },
});
