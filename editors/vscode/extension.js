// ms-lint for VS Code: starts `ms-lint server` (the language server, LSP over stdio) for Python files.
// The command comes from the `ms-lint.command` setting; diagnostics, quick fixes and "fix all"
// (source.fixAll.ms-lint) are the server's, VS Code's language client shows and applies them.
"use strict";

const vscode = require("vscode");
const { LanguageClient } = require("vscode-languageclient/node");

const DEFAULT_COMMAND = ["ms-lint", "server"];
let client;

function serverCommand() {
  const value = vscode.workspace.getConfiguration("ms-lint").get("command");
  const command = Array.isArray(value) && value.length > 0 && value.every((part) => typeof part === "string")
    ? value
    : DEFAULT_COMMAND;
  return { command: command[0], args: command.slice(1) }; // stdio, without an added --stdio
}

async function start() {
  const serverOptions = serverCommand();
  client = new LanguageClient(
    "ms-lint",
    "ms-lint",
    serverOptions,
    {
      documentSelector: [{ scheme: "file", language: "python" }],
      outputChannelName: "ms-lint",
    }
  );
  try {
    await client.start();
  } catch (error) {
    vscode.window.showErrorMessage(
      `ms-lint: could not start \`${[serverOptions.command, ...serverOptions.args].join(" ")}\` ` +
      `(set "ms-lint.command" to the full path of the environment's ms-lint): ${error}`
    );
  }
}

async function stop() {
  if (client) {
    const running = client;
    client = undefined;
    await running.stop();
  }
}

async function activate(context) {
  context.subscriptions.push(
    vscode.commands.registerCommand("ms-lint.restart", async () => {
      await stop();
      await start();
    }),
    vscode.workspace.onDidChangeConfiguration(async (event) => {
      if (event.affectsConfiguration("ms-lint.command")) {
        await stop();
        await start();
      }
    })
  );
  await start();
}

function deactivate() {
  return stop();
}

module.exports = { activate, deactivate, serverCommand };
