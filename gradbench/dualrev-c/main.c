/* main.c - dualrev-c: GradBench's protocol on stdin and stdout */
#include "gb.h"

int main(void)
{
    return gb_serve(stdin, stdout);
}
