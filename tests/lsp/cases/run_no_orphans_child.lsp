# the editor kills the server (SIGKILL) while the program and a Python child
# of it run: the program dies with it (PR_SET_PDEATHSIG) and so does the
# child, whose agent sees its connection end and then finds the server's pid
# gone (a connection closed by a live server is not enough, see
# run_child_outlives.lsp)
--> {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": null, "rootUri": "${WORK_URI}", "capabilities": {"window": {"workDoneProgress": true}, "workspace": {"inlayHint": {"refreshSupport": true}, "codeLens": {"refreshSupport": true}}}}}
<-- {"id":1,"result":{"capabilities":{"executeCommandProvider":{"commands":["hotline.run","hotline.stop","hotline.clear","hotline.showProfile", "..."]}}}}
--> {"jsonrpc":"2.0","method":"initialized","params":{}}
write-file orphan_main.py "import os, subprocess, sys, time\nsubprocess.Popen([sys.executable, os.path.abspath(\"orphan_child.py\")])\nwhile True:\n    time.sleep(0.01)\n"
write-file orphan_child.py "import os, time\nopen(\"child-started\", \"w\").close()\nwhile True:\n    time.sleep(0.01)\n"
--> {"jsonrpc": "2.0", "id": 2, "method": "workspace/executeCommand", "params": {"command": "hotline.run", "arguments": [{"uri": "${WORK_URI}/orphan_main.py"}]}}
<-- {"id": 2, "result": {"started": true}}
wait-file child-started
kill-server
no-process ${WORK}/orphan_main.py
no-process ${WORK}/orphan_child.py
