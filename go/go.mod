module example.invalid/toolmend/go

go 1.22
