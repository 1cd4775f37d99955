// extension.js — starts `cmtc lsp` for .cmt files and connects it to
// VS Code through vscode-languageclient (standard input and output).
'use strict';

const vscode = require('vscode');
const { LanguageClient, TransportKind } = require('vscode-languageclient/node');

let client;

function activate(context) {
  const config = vscode.workspace.getConfiguration('cmt');
  const command = config.get('serverPath') || 'cmtc';
  const args = ['lsp'];
  for (const dir of config.get('includeDirs') || []) {
    args.push('-I', dir);
  }
  // TransportKind.stdio adds --stdio, which cmtc lsp accepts.
  const serverOptions = {
    run: { command, args, transport: TransportKind.stdio },
    debug: { command, args, transport: TransportKind.stdio },
  };
  const clientOptions = {
    documentSelector: [
      { scheme: 'file', language: 'cmt' },
      { scheme: 'untitled', language: 'cmt' },
    ],
  };
  client = new LanguageClient('cmt', 'cmtc language server', serverOptions, clientOptions);
  context.subscriptions.push(
    vscode.commands.registerCommand('cmt.restartServer', () => client.restart()));
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
