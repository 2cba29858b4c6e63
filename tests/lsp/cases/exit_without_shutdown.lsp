# exit without shutdown: status 1
--> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootUri":null,"capabilities":{}}}
<-- {"id":1,"result":{}}
--> {"jsonrpc":"2.0","method":"exit"}
exit 1
