/*
 * custom_box.c - a black box in C with its own gradient, for
 * test/CustomRules.hs, which declares it a primitive of differentiable code
 * (its VJP calls custom_box_grad):
 *
 *     f(x, y) = log(1 + x^2 y^2) + y sin x
 */
#include <math.h>

double custom_box(double x, double y)
{
    return log1p(x * x * y * y) + y * sin(x);
}

void custom_box_grad(double x, double y, double *gx, double *gy)
{
    double q = 1 + x * x * y * y;
    *gx = 2 * x * y * y / q + y * cos(x);
    *gy = 2 * x * x * y / q + sin(x);
}
