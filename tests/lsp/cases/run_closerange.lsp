# a program that closes descriptors it did not open (os.closerange, as every
# daemon does) and opens a file, which got the agent's socket number: the
# agent never touches that file (its sampler has a descriptor table of its
# own, or checks its socket before every use and goes quiet) and the
# program is not killed (the agent used to read the error as "server gone"
# and SIGKILL it); tests/run real_closerange* check both paths
--> {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": null, "rootUri": "${WORK_URI}", "capabilities": {"window": {"workDoneProgress": true}, "workspace": {"inlayHint": {"refreshSupport": true}, "codeLens": {"refreshSupport": true}}}}}
<-- {"id":1,"result":{"capabilities":{"executeCommandProvider":{"commands":["hotline.run","hotline.stop","hotline.clear","hotline.showProfile", "..."]}}}}
--> {"jsonrpc":"2.0","method":"initialized","params":{}}
write-file closer.py "import os, time\nos.closerange(3, 4096)\nf = open(\"data.txt\", \"w\")\nend = time.monotonic() + 0.5\nn = 0\nwhile time.monotonic() < end:\n    f.write(\"line %d\\n\" % n)\n    f.flush()\n    n += 1\n    time.sleep(0.005)\nf.close()\nos.rename(\"data.txt\", \"done.txt\")\n"
--> {"jsonrpc": "2.0", "id": 2, "method": "workspace/executeCommand", "params": {"command": "hotline.run", "arguments": [{"uri": "${WORK_URI}/closer.py"}]}}
<-- {"id": 2, "result": {"started": true}}
<-- {"method": "window/showMessage", "params": {"message": "re:closer.py exited 0"}}
wait-file done.txt
<!- {"method": "window/showMessage", "params": {"message": "re:killed"}}
--> {"jsonrpc":"2.0","id":99,"method":"shutdown"}
<-- {"id":99,"result":null}
--> {"jsonrpc":"2.0","method":"exit"}
exit 0
