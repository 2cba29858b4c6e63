# unknown requests: -32601; unknown notifications: ignored (logged at "log" level);
# $/ notifications: ignored silently
--> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootUri":null,"capabilities":{}}}
<-- {"id":1,"result":{}}
--> {"jsonrpc":"2.0","id":2,"method":"no/such/method","params":{}}
<-- {"id":2,"error":{"code":-32601,"message":"re:no/such/method"}}
--> {"jsonrpc":"2.0","method":"no/such/notification","params":{}}
--> {"jsonrpc":"2.0","method":"$/setTrace","params":{"value":"off"}}
--> {"jsonrpc":"2.0","method":"$/somethingElse"}
--> {"jsonrpc":"2.0","id":3,"method":"hotline/debug/state"}
<-- {"id":3,"result":{}}
<!- {"method":"window/logMessage","params":{"message":"re:\\$/"}}
<!- {"method":"window/logMessage","params":{"message":"re:no/such/notification"}}
--> {"jsonrpc":"2.0","method":"exit"}
exit 1
