// black_box_bad.v: ../tiny/tiny.v with g4 of a cell no library has (a black box) and g2 naming a pin INV lacks.
// A tiny sequential design: a clock buffer tree feeding two flip-flops, a loop
// through logic from ff1 to ff2 and ff2 back to ff1, and a primary input path.
module tiny (in1, in2, clk, out);
input in1;
input in2;
input clk;
output out;
wire in1;
wire in2;
wire clk;
wire out;
wire c1;
wire c2;
wire c3;
wire q1;
wire q2;
wire n1;
wire n2;
wire n3;
BUF cb1 ( .A(clk), .Z(c1) );
BUF cb2 ( .A(c1), .Z(c2) );
BUF cb3 ( .A(c1), .Z(c3) );
DFF ff1 ( .CK(c2), .D(n2), .Q(q1) );
DFF ff2 ( .CK(c3), .D(n3), .Q(q2) );
NAND2 g1 ( .A(q1), .B(in1), .Z(n1) );
INV g2 ( .A(n1), .Y(n1), .Z(n3) );
NAND2 g3 ( .A(q2), .B(in2), .Z(n2) );
NOSUCH g4 ( .A(q2), .Z(out) );
endmodule
