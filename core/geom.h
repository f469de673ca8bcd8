// Geoms: collision shapes fixed to a link or to the world (MuJoCo's mjtGeom habit).
// Model::finalize() validates them and flattens them into the model's geom_* arrays;
// core/collision.h runs the pair functions on them.
#pragma once
#include <cstdint>
#include <string>

#include "core/types.h"

namespace bigstep {

/// Shape kinds. The order is the row / column order of the collision table (collision.h).
enum class GeomType : uint8_t { Plane, Sphere, Capsule, Box, HeightField };
/// Number of geom types: the size of each dimension of the collision table.
inline constexpr int n_geom_type = 5;

const char* geom_type_name(GeomType t);

/// One geom. Its frame (pos, R) is given in the frame of `link` (the world frame for link -1).
/// size by type:
///   plane   : unused; the plane is the half-space z <= 0 of the geom frame (normal = local +z)
///   sphere  : size[0] = radius r >= 0 (r = 0 is a contact point)
///   capsule : size[0] = radius r > 0, size[1] = half-length of its axis segment along local z
///   box     : size = half-extents (> 0) along local x, y, z
///   height field (world only): the surface z = h(x, y) of ModelSpec::height_fields[hfield]
///             (core/height_field.h) in the geom frame; size = its half extents (hx, hy, 0), set
///             by Model::finalize from the height field
struct GeomSpec {
  std::string name;
  int link = -1;                    ///< link index, -1 = world
  GeomType type = GeomType::Sphere;
  Vec3 pos = Vec3::Zero();          ///< geom frame origin in the link frame [m]
  Mat3 R = Mat3::Identity();        ///< geom frame orientation in the link frame
  Vec3 size = Vec3::Zero();         ///< see above [m]
  uint32_t contype = 1;             ///< two geoms may touch when (contype_a & conaffinity_b) or
  uint32_t conaffinity = 1;         ///< (contype_b & conaffinity_a) is non-zero (MuJoCo's rule)
  int hfield = -1;                  ///< height field: index into ModelSpec::height_fields
};

/// Most contacts one pair function returns for geoms of types (a, b) in either order; 0 where
/// no pair function exists (box-box, box-capsule, plane-plane, and a height field with a plane or
/// a height field). Defined next to the collision table (collision_primitive.cpp) so the two
/// cannot disagree.
int pair_max_contacts(GeomType a, GeomType b);

}  // namespace bigstep
