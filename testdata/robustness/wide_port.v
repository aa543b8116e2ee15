module m (a); input [65535:0] a; INV i0 ( .A(a[0]), .Z() ); endmodule
