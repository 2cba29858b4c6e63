# exit is honoured even before initialize (status 1: no shutdown)
--> {"jsonrpc":"2.0","method":"exit"}
exit 1
