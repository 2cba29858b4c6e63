# hotline.intervalMs outside the agent's range (protocol/agent_config.h) is
# refused with the range named, not replaced by the agent's default while
# the profile records the asked value; a value in range runs and is recorded
--> {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": null, "rootUri": "${WORK_URI}", "capabilities": {}, "initializationOptions": {"intervalMs": 0.07}}}
<-- {"id": 1, "result": {}}
--> {"jsonrpc": "2.0", "method": "initialized", "params": {}}
write-file prog.py "import time\nt = time.monotonic()\nwhile time.monotonic() - t < 0.3: pass\n"
--> {"jsonrpc": "2.0", "id": 2, "method": "workspace/executeCommand", "params": {"command": "hotline.run", "arguments": [{"uri": "${WORK_URI}/prog.py"}]}}
<-- {"id": 2, "error": {"message": "re:cannot run: the sampling interval must be 0\\.1\\.\\.10000 ms, not 0\\.07"}}
--> {"jsonrpc": "2.0", "method": "workspace/didChangeConfiguration", "params": {"settings": {"intervalMs": 0.5}}}
--> {"jsonrpc": "2.0", "id": 3, "method": "workspace/executeCommand", "params": {"command": "hotline.run", "arguments": [{"uri": "${WORK_URI}/prog.py"}]}}
<-- {"id": 3, "result": {"started": true}}
--> {"jsonrpc":"2.0","id":99,"method":"shutdown"}
<-- {"id":99,"result":null}
--> {"jsonrpc":"2.0","method":"exit"}
exit 0
