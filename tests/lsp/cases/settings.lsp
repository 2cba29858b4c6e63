# settings from initializationOptions, then merged from didChangeConfiguration
# (both {"hotline": {...}} and the bare section are accepted)
--> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{"experimental":{"hotlineExecuting":true}},"initializationOptions":{"logLevel":"error","hints":{"threshold":5}}}}
<-- {"id":1,"result":{}}
--> {"jsonrpc":"2.0","method":"initialized","params":{}}
--> {"jsonrpc":"2.0","id":2,"method":"hotline/debug/state"}
<-- {"id":2,"result":{"settings":{"logLevel":"error","hints":{"threshold":5}},"executing":true}}
--> {"jsonrpc":"2.0","method":"workspace/didChangeConfiguration","params":{"settings":{"hotline":{"hints":{"enabled":false}}}}}
--> {"jsonrpc":"2.0","method":"workspace/didChangeConfiguration","params":{"settings":{"logLevel":"log"}}}
--> {"jsonrpc":"2.0","id":3,"method":"hotline/debug/state"}
<-- {"id":3,"result":{"settings":{"logLevel":"log","hints":{"threshold":5,"enabled":false}}}}
# logLevel "error" hid the info-level "ready" message
<!- {"method":"window/logMessage","params":{"message":"re:ready"}}
--> {"jsonrpc":"2.0","method":"exit"}
exit 1
