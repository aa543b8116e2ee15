module tiny (a, z);
input a;
output z;
INV u1 (a, z);
endmodule
