# Jupyter cells in the editor (docs/notebooks.md, "Cells in the editor"):
# a kernel's profile names a cell by ipykernel's file for it,
# /tmp/ipykernel_<pid>/<hash>.py, <hash> = MurmurHash2 of the cell's text
# (1649600069 is ipykernel's own name for cell W0's text, which
# tests/lsp/test_cellname.py checks the server computes alike). The server
# declares notebookDocumentSync; notebookDocument/didOpen with two cells:
# hints (UTF-16 columns: the hot line holds "é" twice and "🎉"), lenses, the
# hover and the hot-line diagnostics come back on cell W0's URI at the lines
# of the cell; W1 (text not profiled) gets nothing. An edit to W0 takes them
# away (its text no longer hashes to the file), undoing it brings them back
# (the very text that ran); cells added and removed keep the notebook's
# structure.
write-file .hotline/profile.json "{\"version\": 1, \"program\": \"kernel\", \"argv\": [], \"elapsed_s\": 1.0, \"interval_ms\": 10, \"samples\": 100, \"exit\": {\"status\": 0, \"signal\": null, \"reason\": \"exited 0\"}, \"totals\": {\"python_s\": 0.4, \"native_s\": 0, \"system_s\": 0.6, \"cpu_s\": 0.4, \"samples\": 100}, \"files\": {\"/tmp/ipykernel_4242/1649600069.py\": {\"lines\": {\"2\": {\"python_s\": 0.4, \"native_s\": 0, \"system_s\": 0, \"cpu_s\": 0.4, \"samples\": 40}, \"4\": {\"python_s\": 0, \"native_s\": 0, \"system_s\": 0.6, \"cpu_s\": 0, \"samples\": 60}}, \"functions\": [], \"totals\": {\"python_s\": 0.4, \"native_s\": 0, \"system_s\": 0.6, \"cpu_s\": 0.4, \"samples\": 100}}}}"
--> {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": null, "rootUri": "${WORK_URI}", "capabilities": {}, "initializationOptions": {"hints": {"threshold": 1}, "diagnostics": {"hotLines": 2}}}}
<-- {"id": 1, "result": {"capabilities": {"notebookDocumentSync": {"notebookSelector": [{"notebook": {"notebookType": "jupyter-notebook"}, "cells": [{"language": "python"}]}]}}}}
--> {"jsonrpc": "2.0", "method": "initialized", "params": {}}
<-- {"method": "window/logMessage", "params": {"message": "re:loaded the last profile"}}
# no cell open yet: the hot lines go to the cell file's own URI
<-- {"method": "textDocument/publishDiagnostics", "params": {"uri": "file:///tmp/ipykernel_4242/1649600069.py", "diagnostics": [{"range": {"start": {"line": 3}}, "code": "hot-line"}, {"range": {"start": {"line": 1}}, "code": "hot-line"}]}}
--> {"jsonrpc": "2.0", "method": "notebookDocument/didOpen", "params": {"notebookDocument": {"uri": "${WORK_URI}/nb.ipynb", "notebookType": "jupyter-notebook", "version": 1, "cells": [{"kind": 2, "document": "vscode-notebook-cell:${WORK}/nb.ipynb#W0"}, {"kind": 2, "document": "vscode-notebook-cell:${WORK}/nb.ipynb#W1"}]}, "cellTextDocuments": [{"uri": "vscode-notebook-cell:${WORK}/nb.ipynb#W0", "languageId": "python", "version": 1, "text": "import time\nx = 'été 🎉'  # hot\nfor i in range(3):\n    time.sleep(0.1)\n"}, {"uri": "vscode-notebook-cell:${WORK}/nb.ipynb#W1", "languageId": "python", "version": 1, "text": "print('other cell')\n"}]}}
# they move to the cell, at the cell's lines; the file's URI is cleared
<-- {"method": "textDocument/publishDiagnostics", "params": {"uri": "file:///tmp/ipykernel_4242/1649600069.py", "diagnostics": []}}
<-- {"method": "textDocument/publishDiagnostics", "params": {"uri": "vscode-notebook-cell:${WORK}/nb.ipynb#W0", "diagnostics": [{"range": {"start": {"line": 3}}, "code": "hot-line"}, {"range": {"start": {"line": 1}}, "code": "hot-line"}]}}
--> {"jsonrpc": "2.0", "id": 2, "method": "hotline/debug/state", "params": {}}
<-- {"id": 2, "result": {"notebooks": [{"uri": "${WORK_URI}/nb.ipynb", "notebookType": "jupyter-notebook", "version": 1, "cells": [{"document": "vscode-notebook-cell:${WORK}/nb.ipynb#W0", "kind": 2, "hash": 1649600069}, {"document": "vscode-notebook-cell:${WORK}/nb.ipynb#W1", "kind": 2, "hash": 2254352499}]}]}}
--> {"jsonrpc": "2.0", "id": 3, "method": "textDocument/inlayHint", "params": {"textDocument": {"uri": "vscode-notebook-cell:${WORK}/nb.ipynb#W0"}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 100, "character": 0}}}}
<-- {"id": 3, "result": [{"position": {"line": 1, "character": 19}, "label": "re:^.40% python$"}, {"position": {"line": 3, "character": 19}, "label": "re:^.60% waiting$"}]}
--> {"jsonrpc": "2.0", "id": 4, "method": "textDocument/codeLens", "params": {"textDocument": {"uri": "vscode-notebook-cell:${WORK}/nb.ipynb#W0"}}}
<-- {"id": 4, "result": [{"range": {"start": {"line": 0}}, "command": {"title": "⏱ 100% · 40 py · 60 waiting", "arguments": [{"uri": "vscode-notebook-cell:${WORK}/nb.ipynb#W0", "function": "<module>"}]}}]}
--> {"jsonrpc": "2.0", "id": 5, "method": "textDocument/hover", "params": {"textDocument": {"uri": "vscode-notebook-cell:${WORK}/nb.ipynb#W0"}, "position": {"line": 3, "character": 4}}}
<-- {"id": 5, "result": {"contents": {"kind": "markdown", "value": "re:60\\.0%"}}}
# the other cell's text ran nowhere: nothing on it
--> {"jsonrpc": "2.0", "id": 6, "method": "textDocument/inlayHint", "params": {"textDocument": {"uri": "vscode-notebook-cell:${WORK}/nb.ipynb#W1"}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 100, "character": 0}}}}
<-- {"id": 6, "result": []}
# an edit to the cell after it ran: its text no longer hashes to the file
--> {"jsonrpc": "2.0", "method": "notebookDocument/didChange", "params": {"notebookDocument": {"uri": "${WORK_URI}/nb.ipynb", "version": 2}, "change": {"cells": {"textContent": [{"document": {"uri": "vscode-notebook-cell:${WORK}/nb.ipynb#W0", "version": 2}, "changes": [{"range": {"start": {"line": 2, "character": 16}, "end": {"line": 2, "character": 16}}, "text": "0"}]}]}}}}
<-- {"method": "textDocument/publishDiagnostics", "params": {"uri": "vscode-notebook-cell:${WORK}/nb.ipynb#W0", "diagnostics": []}}
--> {"jsonrpc": "2.0", "id": 7, "method": "textDocument/inlayHint", "params": {"textDocument": {"uri": "vscode-notebook-cell:${WORK}/nb.ipynb#W0"}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 100, "character": 0}}}}
<-- {"id": 7, "result": []}
--> {"jsonrpc": "2.0", "id": 8, "method": "textDocument/codeLens", "params": {"textDocument": {"uri": "vscode-notebook-cell:${WORK}/nb.ipynb#W0"}}}
<-- {"id": 8, "result": []}
--> {"jsonrpc": "2.0", "id": 9, "method": "hotline/debug/state", "params": {"uri": "vscode-notebook-cell:${WORK}/nb.ipynb#W0"}}
<-- {"id": 9, "result": {"document": {"text": "import time\nx = 'été 🎉'  # hot\nfor i in range(30):\n    time.sleep(0.1)\n", "version": 2}, "notebooks": [{"version": 2, "cells": [{"hash": 1326288426}, {"hash": 2254352499}]}]}}
# undone: the very text that ran, its hints are back
--> {"jsonrpc": "2.0", "method": "notebookDocument/didChange", "params": {"notebookDocument": {"uri": "${WORK_URI}/nb.ipynb", "version": 3}, "change": {"cells": {"textContent": [{"document": {"uri": "vscode-notebook-cell:${WORK}/nb.ipynb#W0", "version": 3}, "changes": [{"range": {"start": {"line": 2, "character": 16}, "end": {"line": 2, "character": 17}}, "text": ""}]}]}}}}
<-- {"method": "textDocument/publishDiagnostics", "params": {"uri": "vscode-notebook-cell:${WORK}/nb.ipynb#W0", "diagnostics": [{"range": {"start": {"line": 3}}}, {"range": {"start": {"line": 1}}}]}}
--> {"jsonrpc": "2.0", "id": 10, "method": "textDocument/inlayHint", "params": {"textDocument": {"uri": "vscode-notebook-cell:${WORK}/nb.ipynb#W0"}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 100, "character": 0}}}}
<-- {"id": 10, "result": [{"position": {"line": 1, "character": 19}}, {"position": {"line": 3, "character": 19}}]}
# a cell inserted before W0 (opened with it), then W1 removed (closed with it)
--> {"jsonrpc": "2.0", "method": "notebookDocument/didChange", "params": {"notebookDocument": {"uri": "${WORK_URI}/nb.ipynb", "version": 4}, "change": {"cells": {"structure": {"array": {"start": 0, "deleteCount": 0, "cells": [{"kind": 1, "document": "vscode-notebook-cell:${WORK}/nb.ipynb#M0"}]}, "didOpen": [{"uri": "vscode-notebook-cell:${WORK}/nb.ipynb#M0", "languageId": "markdown", "version": 1, "text": "# title"}]}}}}}
--> {"jsonrpc": "2.0", "method": "notebookDocument/didChange", "params": {"notebookDocument": {"uri": "${WORK_URI}/nb.ipynb", "version": 5}, "change": {"cells": {"structure": {"array": {"start": 2, "deleteCount": 1}, "didClose": [{"uri": "vscode-notebook-cell:${WORK}/nb.ipynb#W1"}]}}}}}
--> {"jsonrpc": "2.0", "id": 11, "method": "hotline/debug/state", "params": {}}
<-- {"id": 11, "result": {"documents": 2, "notebooks": [{"version": 5, "cells": [{"document": "vscode-notebook-cell:${WORK}/nb.ipynb#M0", "kind": 1}, {"document": "vscode-notebook-cell:${WORK}/nb.ipynb#W0", "kind": 2, "hash": 1649600069}]}]}}
# the notebook closes with its cells: the diagnostics go back to the file's URI
--> {"jsonrpc": "2.0", "method": "notebookDocument/didClose", "params": {"notebookDocument": {"uri": "${WORK_URI}/nb.ipynb"}, "cellTextDocuments": [{"uri": "vscode-notebook-cell:${WORK}/nb.ipynb#M0"}, {"uri": "vscode-notebook-cell:${WORK}/nb.ipynb#W0"}]}}
<-- {"method": "textDocument/publishDiagnostics", "params": {"uri": "file:///tmp/ipykernel_4242/1649600069.py", "diagnostics": [{"range": {"start": {"line": 3}}}, {"range": {"start": {"line": 1}}}]}}
--> {"jsonrpc": "2.0", "id": 12, "method": "hotline/debug/state", "params": {}}
<-- {"id": 12, "result": {"documents": 0, "notebooks": []}}
--> {"jsonrpc":"2.0","id":99,"method":"shutdown"}
<-- {"id":99,"result":null}
--> {"jsonrpc":"2.0","method":"exit"}
exit 0
