// ScaleAddCustom: z = alpha * x (+ bias when bias is given) + the sum of the list attribute
// shift, float or half.
// Tiling keys: 1 float with bias, 2 float without, 11 half with bias, 12 half without.
// The blocks: as many as the vector cores (PlatformAscendC), fewer for small inputs; the
// element count must split into blocks of whole 256-byte tiles, else the tiling fails.
#include "scale_add_custom_tiling.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

namespace optiling {
static ge::graphStatus ScaleAddTiling(gert::TilingContext *context)
{
    const gert::StorageShape *xs = context->GetInputShape(0);
    const gert::Tensor *bias = context->GetOptionalInputTensor(1);
    const float *alpha = context->GetAttrs()->GetAttrPointer<float>(0);
    const gert::TypedContinuousVector<int64_t> *shift = context->GetAttrs()->GetListInt(1);
    float shiftSum = 0.0f;
    if (shift != nullptr) {
        for (size_t i = 0; i < shift->GetSize(); i++) {
            shiftSum += static_cast<float>(shift->GetData()[i]);
        }
    }
    if (xs == nullptr || alpha == nullptr) {
        return ge::GRAPH_FAILED;
    }
    if (bias != nullptr && bias->GetStorageShape() != xs->GetStorageShape()) {
        return ge::GRAPH_FAILED;
    }
    ge::DataType dt = context->GetInputDesc(0)->GetDataType();
    uint32_t esize = dt == ge::DT_FLOAT ? 4 : 2;
    uint64_t total = xs->GetStorageShape().GetShapeSize();
    uint32_t tile = 256 / esize;
    auto ascendc = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint32_t cores = ascendc.GetCoreNumAiv();
    uint64_t tiles = total / tile;
    if (total == 0 || total % tile != 0) {
        return ge::GRAPH_FAILED;
    }
    uint32_t blocks = cores;
    while (blocks > 1 && tiles % blocks != 0) {
        --blocks;
    }
    ScaleAddCustomTilingData t;
    t.set_blockLength(static_cast<uint32_t>(total / blocks));
    t.set_tileLength(tile);
    t.set_alpha(*alpha);
    t.set_shift(shiftSum);
    context->SetBlockDim(blocks);
    context->SetTilingKey((dt == ge::DT_FLOAT ? 0 : 10) + (bias != nullptr ? 1 : 2));
    t.SaveToBuffer(context->GetRawTilingData()->GetData(), context->GetRawTilingData()->GetCapacity());
    context->GetRawTilingData()->SetDataSize(t.GetDataSize());
    context->GetWorkspaceSizes(1)[0] = 0;
    return ge::GRAPH_SUCCESS;
}
} // namespace optiling

namespace ops {
class ScaleAddCustom : public OpDef {
public:
    explicit ScaleAddCustom(const char *name) : OpDef(name)
    {
        this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT, ge::DT_FLOAT16}).Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("bias").ParamType(OPTIONAL).DataType({ge::DT_FLOAT, ge::DT_FLOAT16}).Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("z").ParamType(REQUIRED).DataType({ge::DT_FLOAT, ge::DT_FLOAT16}).Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Attr("alpha").AttrType(REQUIRED).Float();
        this->Attr("shift").AttrType(OPTIONAL).ListInt({});
        this->AICore().SetTiling(optiling::ScaleAddTiling).AddConfig("ascend910b");
    }
};
OP_ADD(ScaleAddCustom);
} // namespace ops
