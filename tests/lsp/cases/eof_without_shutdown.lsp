# EOF on stdin behaves like exit without shutdown
--> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootUri":null,"capabilities":{}}}
<-- {"id":1,"result":{}}
close
exit 1
