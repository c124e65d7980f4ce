# does torch's float32 cumsum on CPU accumulate in float32 (stuck under half an ulp) or wider?
import torch
x = torch.tensor([0.75] + [1e-8] * 1000)
print("cumsum end:", float(x.cumsum(0)[-1]), " double:", float(x.double().cumsum(0)[-1]))
