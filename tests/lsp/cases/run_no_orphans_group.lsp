# the editor kills the server (SIGKILL) during a run whose program started a
# child that is not Python (a `sleep`, through subprocess): the whole
# process group goes, not only the Python process
--> {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": null, "rootUri": "${WORK_URI}", "capabilities": {}}}
<-- {"id":1,"result":{}}
--> {"jsonrpc":"2.0","method":"initialized","params":{}}
write-file group.py "import shutil, subprocess, time\nsub = subprocess.Popen(['${WORK}/sleeper', '300'], executable=shutil.which('sleep'))\nopen('${WORK}/started', 'w').close()\nwhile True:\n    time.sleep(0.01)\n"
--> {"jsonrpc": "2.0", "id": 2, "method": "workspace/executeCommand", "params": {"command": "hotline.run", "arguments": [{"uri": "${WORK_URI}/group.py"}]}}
<-- {"id": 2, "result": {"started": true}}
wait-file started
kill-server
no-process ${WORK}/group.py
no-process ${WORK}/sleeper
