// Loads editors/vscode/extension.js outside VS Code (tests/test_vscode_extension.py): `vscode` and
// `vscode-languageclient/node` are replaced by recording fakes, then the extension is activated, restarted and
// deactivated; what it did is printed as JSON. Usage: node load_extension.js EXTENSION_JS [COMMAND_SETTING_JSON]
"use strict";

const Module = require("module");

const events = [];
const setting = process.argv[3] === undefined ? undefined : JSON.parse(process.argv[3]);
const commands = {};
let configurationListener;

const vscode = {
  workspace: {
    getConfiguration(section) {
      events.push(["getConfiguration", section]);
      return { get: (key) => (key === "command" ? setting : undefined) };
    },
    onDidChangeConfiguration(listener) {
      configurationListener = listener;
      return { dispose() {} };
    },
  },
  commands: {
    registerCommand(name, callback) {
      commands[name] = callback;
      return { dispose() {} };
    },
  },
  window: {
    showErrorMessage(message) {
      events.push(["showErrorMessage", message]);
    },
  },
};

class LanguageClient {
  constructor(id, name, serverOptions, clientOptions) {
    events.push(["new LanguageClient", id, name, serverOptions, clientOptions]);
  }
  async start() {
    events.push(["start"]);
  }
  async stop() {
    events.push(["stop"]);
  }
}
const languageClient = { LanguageClient, TransportKind: { stdio: 0, ipc: 1, pipe: 2, socket: 3 } };

const fakes = { vscode, "vscode-languageclient/node": languageClient };
const load = Module._load;
Module._load = function (request, parent, isMain) {
  if (Object.prototype.hasOwnProperty.call(fakes, request)) {
    return fakes[request];
  }
  return load.call(this, request, parent, isMain);
};

(async () => {
  const extension = require(process.argv[2]);
  const subscriptions = [];
  await extension.activate({ subscriptions });
  events.push(["subscriptions", subscriptions.length, Object.keys(commands)]);
  await commands["ms-lint.restart"]();
  await configurationListener({ affectsConfiguration: (name) => name === "ms-lint.command" });
  await configurationListener({ affectsConfiguration: () => false });
  await extension.deactivate();
  process.stdout.write(JSON.stringify(events));
})().catch((error) => {
  process.stderr.write(String(error && error.stack ? error.stack : error));
  process.exit(1);
});
