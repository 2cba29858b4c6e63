# a request cancelled before it is handled still gets a response: -32800;
# cancelling an unknown or finished id changes nothing
--> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootUri":null,"capabilities":{}}}
<-- {"id":1,"result":{}}
-->* [{"jsonrpc":"2.0","id":7,"method":"hotline/debug/state"},{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":7}}]
<-- {"id":7,"error":{"code":-32800}}
--> {"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":99}}
--> {"jsonrpc":"2.0","id":"s","method":"hotline/debug/state"}
<-- {"id":"s","result":{"positionEncoding":"utf-16"}}
--> {"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"s"}}
--> {"jsonrpc":"2.0","id":8,"method":"hotline/debug/state"}
<-- {"id":8,"result":{}}
<!- {"id":"s","error":{}}
--> {"jsonrpc":"2.0","method":"exit"}
exit 1
