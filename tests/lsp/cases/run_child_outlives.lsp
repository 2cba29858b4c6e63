# a Python child that outlives the program: the server stops waiting for it
# after its drain (3 s) and closes its connection; that is not the server
# dying, so the child runs on unharmed (it used to SIGKILL itself); the
# output it writes after the drain (200 KB, more than a pipe holds) is read
# and dropped by the server, never a broken pipe. With the drain the server
# sent it a "stop", which releases it: it survives the server's exit too
# (then nothing reads its output any more, so it prints no more)
--> {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": null, "rootUri": "${WORK_URI}", "capabilities": {"window": {"workDoneProgress": true}, "workspace": {"inlayHint": {"refreshSupport": true}, "codeLens": {"refreshSupport": true}}}}}
<-- {"id":1,"result":{"capabilities":{"executeCommandProvider":{"commands":["hotline.run","hotline.stop","hotline.clear","hotline.showProfile", "..."]}}}}
--> {"jsonrpc":"2.0","method":"initialized","params":{}}
write-file main.py "import os, subprocess, sys\nsubprocess.Popen([sys.executable, os.path.abspath(\"child.py\")])\nprint(\"main done\")\n"
write-file child.py "import os, sys, time\ndef wait_for(name):  # the test says when (60 s at most)\n    deadline = time.monotonic() + 60\n    while not os.path.exists(name) and time.monotonic() < deadline:\n        time.sleep(0.02)\n# outlive the program and the server's 3 s drain\nwait_for(\"go\")\nwith open(\"child.tmp\", \"w\") as f:\n    f.write(\"ran %d\" % sum(range(1000)))\n# its output goes on after the drain: read and dropped, never a broken pipe\nfor _ in range(200):\n    print(\"x\" * 1023, flush=True)\nprint(\"child says bye\", file=sys.stderr, flush=True)\nos.rename(\"child.tmp\", \"child-done.txt\")\n# outlive the server itself (it exits normally): the run had let us go\nwait_for(\"go2\")\ntime.sleep(0.5)  # work on past the agent's 100 ms checks of the server\nopen(\"child2-done.txt\", \"w\").close()\n"
--> {"jsonrpc": "2.0", "id": 2, "method": "workspace/executeCommand", "params": {"command": "hotline.run", "arguments": [{"uri": "${WORK_URI}/main.py"}]}}
<-- {"id": 2, "result": {"started": true}}
<-- {"method": "window/showMessage", "params": {"message": "re:main.py exited 0"}}
write-file go ""
wait-file child-done.txt
--> {"jsonrpc":"2.0","id":99,"method":"shutdown"}
<-- {"id":99,"result":null}
--> {"jsonrpc":"2.0","method":"exit"}
exit 0
write-file go2 ""
wait-file child2-done.txt
no-process ${WORK}/child.py
