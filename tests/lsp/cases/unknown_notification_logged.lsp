# with logLevel "log", an unknown notification is reported as a log message
--> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{},"initializationOptions":{"logLevel":"log"}}}
<-- {"id":1,"result":{}}
--> {"jsonrpc":"2.0","method":"no/such/notification","params":{}}
<-- {"method":"window/logMessage","params":{"type":4,"message":"re:no/such/notification"}}
--> {"jsonrpc":"2.0","method":"exit"}
exit 1
